"""The parts' maps let go on a thread of their own (loaders.index.unmapper): held while the
sort lets go of the parts' columns, unmapped by the unmapper's thread, and none left once
its block ends, as the build left none before."""
import os
import threading

import numpy as np
import pyarrow as pa
import pytest
from part_maps import mapped_parts, received_from_a_child

from loaders.index import unmapper as U

pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create"),
                                reason="no anonymous memory files")


def _part() -> pa.Table:
    rng = np.random.default_rng(2)
    return received_from_a_child(pa.table({"x": rng.normal(size=50_000),
                                           "t": [f"row {i}" for i in range(50_000)]}))


def test_the_maps_outlive_their_columns_until_the_unmapper_lets_them_go(monkeypatch):
    unmapped_on = []
    real_clear = list.clear

    class Held(list):  # whose clear() says which thread ran it
        def clear(self) -> None:
            unmapped_on.append(threading.current_thread().name)
            real_clear(self)

    part = _part()
    with U.Unmapper() as unmapper:
        unmapper._maps = Held(unmapper._maps)
        assert len(unmapper._maps) == 1
        sorted_copy = part.take(pa.array(np.arange(part.num_rows)[::-1]))
        del part  # the sort let go of the part's columns: the map stays, held
        assert len(mapped_parts()) == 1
        unmapper.start()
    assert mapped_parts() == []  # joined: gone by the block's end
    assert unmapped_on[0] == "rl-board-unmap"
    assert sorted_copy.column("t")[0].as_py() == "row 49999"


def test_maps_never_handed_to_the_thread_go_at_the_blocks_end():
    part = _part()
    with pytest.raises(RuntimeError), U.Unmapper():
        del part
        assert len(mapped_parts()) == 1
        raise RuntimeError("the sort failed")
    assert mapped_parts() == []
