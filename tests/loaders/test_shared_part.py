"""A worker's rows through shared memory (loaders.index.shared_part): the table read back is
the table sent, every column in buffers of the reader's own (no map of the file is left),
and without anonymous memory files the table simply goes by the pipe."""
import os

import numpy as np
import pyarrow as pa
import pytest
from part_maps import mapped_parts, opened_in_one_thread, part_rss, received_from_a_child

from loaders.index import shared_part as SP


def _table() -> pa.Table:
    n = 5000
    rng = np.random.default_rng(0)
    texts = [None if i % 7 == 0 else f"text {i} ✓" for i in range(n)]
    return pa.table({
        "ints": pa.array(rng.integers(-9, 9, n)),
        "floats": pa.array(np.where(rng.random(n) < 0.1, np.nan, rng.random(n))),
        "flags": pa.array(rng.random(n) < 0.5),
        "texts": pa.array(texts),
        "blobs": pa.array([None if i % 3 else bytes([i % 256]) * 9 for i in range(n)]),
        "codes": pa.array([f"file {i % 4}" for i in range(n)]).dictionary_encode(),
        "nested": pa.array([[f"t{i % 3}"] * (i % 3) for i in range(n)],
                           pa.list_(pa.dictionary(pa.int32(), pa.string()))),
        "nulls": pa.nulls(n)})


@pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="no anonymous memory files")
def test_a_table_from_another_process_is_read_in_place_and_its_map_goes_with_it():
    table = _table()
    got = received_from_a_child(table)
    assert len(mapped_parts()) == 1  # read where it lies
    assert got.schema == table.schema
    assert got.to_pandas().equals(table.to_pandas())  # NaN where it was (Arrow's equals: never)
    assert got.column("codes").chunk(0).dictionary.to_pylist() == [f"file {i}" for i in range(4)]
    backwards = got.take(pa.array(range(got.num_rows - 1, -1, -1)))
    del got  # a sort's copy holds nothing of the map (a dictionary was copied out)
    assert mapped_parts() == []
    assert backwards.to_pandas().iloc[::-1].reset_index(drop=True).equals(table.to_pandas())
    assert SP.received(table) is table


@pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="no anonymous memory files")
def test_a_sorted_column_hands_its_pages_back_and_leaves_the_others_whole():
    rng = np.random.default_rng(1)
    table = pa.table({f"c{i}": rng.normal(size=200_000) for i in range(4)})  # 1.6 MB each
    got = received_from_a_child(table)
    for name in table.column_names:  # each column read: its pages come in
        assert got.column(name).to_numpy().sum() == table.column(name).to_numpy().sum()
    before = part_rss()
    assert before >= 4 * 1500
    for name in ("c0", "c1"):
        SP.hand_back(got.column(name))
    assert part_rss() <= before - (2 * 1500 << 10)  # two columns' pages gone
    for name in ("c2", "c3"):  # the others read as they were
        assert got.column(name).equals(table.column(name))
    SP.hand_back(pa.chunked_array([pa.array(np.ones(100_000))]))  # no part's: left alone


def test_what_ipc_cannot_write_or_no_column_goes_as_it_is():
    """Chunks whose dictionaries differ (IPC files refuse them) and rows without columns
    (a count only a table keeps) go by the pipe, before any file is made."""
    differing = pa.chunked_array([pa.array(["a", "b"]).dictionary_encode(),
                                  pa.array(["c"]).dictionary_encode()])
    odd = pa.table({"codes": differing})
    assert SP.shared(odd) is odd
    empty = pa.table({"x": [1, 2, 3]}).drop_columns(["x"])
    assert empty.num_rows == 3 and SP.shared(empty) is empty


def test_without_memory_files_the_table_goes_as_it_is(monkeypatch):
    table = _table()

    def refused(*args):
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "memfd_create", refused)
    assert SP.shared(table) is table
    assert SP.received(table) is table


def test_a_worker_pool_sends_its_rows_shared(tmp_path):
    """The pool's workers hand over shared parts, and the main process keeps tables (in a
    process of one thread, as the CLI's: the pool then forks its workers)."""
    from dump_files import make_sample, write_dump

    from loaders import open_run
    from loaders import schema as S

    root = tmp_path / "run"
    for f in range(3):
        write_dump(root / f"rollout_data_rank_{f}.jsonl",
                   [make_sample(step, n=9, seed=f * 10 + i) for step in range(4) for i in range(6)])
    inline = open_run(root, use_cache=False).samples
    method, seen, maps_left, shared = opened_in_one_thread(root)
    assert method == "fork"
    assert seen == ["SharedPart"]
    assert maps_left == 0  # the sorted run holds nothing of the maps
    pd_columns = [c for c in inline.columns if c != S.KEY]
    assert shared[pd_columns].equals(inline[pd_columns])
