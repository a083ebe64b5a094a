"""A run's sort writes each number column into the pages its parts' rows held
(loaders.index.slabs, in_place): the parts come from real child processes through shared
memory, and the sorted run is the run a plain Arrow sort gives, with or without the pages'
reuse, and lets its pages go when it goes."""
import gc
import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from part_maps import mapped_parts, part_files, part_rss, received_from_a_child

from loaders.index import in_place, kernel, parts, slabs
from loaders.index import shared_part as SP
from loaders.index.runs import runs_of
from loaders.index.slabs import PAGE

pytestmark = pytest.mark.skipif(
    not hasattr(os, "memfd_create") or not hasattr(kernel._C, "alias"),
    reason="no anonymous memory files, or no kernel build")


@pytest.fixture(autouse=True)
def a_large_run(monkeypatch):
    """Every sort here is of a run past WHOLE_TAKE_BYTES (a smaller one is copied)."""
    monkeypatch.setattr(parts, "WHOLE_TAKE_BYTES", 0)


def _part(rank: int, steps: int = 12, per_step: int = 700) -> pa.Table:
    n = steps * per_step
    rng = np.random.default_rng(rank)
    return pa.table({
        "step": pa.array(np.repeat(np.arange(steps), per_step)),
        "rank": pa.array(np.full(n, rank)),
        "line": pa.array(np.arange(n) + 1),
        "reward": pa.array(rng.normal(size=n)),
        "small": pa.array(rng.integers(0, 200, n).astype(np.uint8)),
        "ratio": pa.array(rng.random(n).astype(np.float32)),
        "flags": pa.array(rng.random(n) < 0.5),
        "gaps": pa.array([None if i % 5 == 0 else float(i) for i in range(n)]),
        "texts": pa.array([f"r{rank} {i} ✓" for i in range(n)]),
        "blobs": pa.array([bytes([i % 256]) * (i % 5) for i in range(n)]),
        "holes": pa.array([None if i % 4 == 0 else "t" for i in range(n)]),
    }).slice(3)  # a slice: the slabs hold its rows, not its parent's


def _received(tables: list[pa.Table]) -> list[pa.Table]:
    return [received_from_a_child(table) for table in tables]


def _mapped() -> int:
    return len(mapped_parts())


def _order(whole: pa.Table) -> pa.Array:
    """The parts' rows in order of (step, rank), as the run's sort orders them."""
    return pa.array(np.lexsort([whole.column("rank").to_numpy(),
                                whole.column("step").to_numpy()]))


def _runs(whole: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    return runs_of(_order(whole))


def _expected(tables: list[pa.Table]) -> pa.Table:
    """The parts sorted by a plain Arrow sort."""
    whole = pa.concat_tables(tables)
    return whole.take(pc.sort_indices(whole, [("step", "ascending"), ("rank", "ascending"),
                                               ("line", "ascending")]))


def test_number_columns_come_in_pages_of_their_own_and_the_rest_as_before():
    table = _part(0)
    got, = _received([table])
    assert got.equals(table) and got.schema == table.schema
    slabbed = {name for name in got.column_names
               if SP.slab_of(got.column(name).chunk(0).buffers()[1])}
    assert slabbed == {"step", "rank", "line", "reward", "small", "ratio", "texts", "blobs"}
    for name in slabbed:  # a text's offsets (from 0) and data each a slab
        for data in got.column(name).chunk(0).buffers()[1:]:
            assert data.address % PAGE == 0 and SP.slab_of(data) is not None


def test_a_sort_writes_the_number_columns_into_the_parts_pages_and_frees_them_with_the_run():
    tables = [_part(rank) for rank in (2, 0, 1)]
    got = _received(tables)
    assert all(slabs is not None for slabs in in_place.claimed(
        [got[0].column("reward"), got[1].column("reward")])[0])
    before = _mapped()
    assert before == 3
    run = parts.sorted_parts(got)
    assert got == []  # the parts are the run's now
    gc.collect()
    expected = _expected(tables)
    assert run.to_pandas().equals(expected.to_pandas())
    # the maps left are the aliases of the number and text columns: the parts' own went,
    # and no page is counted twice (the part's map let go of what its alias maps)
    kept = ("step", "rank", "line", "reward", "small", "ratio", "texts", "blobs")
    assert _mapped() >= 10 and all(not SP.slab_of(run.column(c).chunk(0).buffers()[1])
                                   for c in ("step", "reward", "ratio", "texts"))
    held = sum(run.column(c).nbytes for c in kept)
    assert held <= part_rss() <= held + 3 * 10 * PAGE
    del run
    gc.collect()
    assert _mapped() == 0


def test_a_refused_map_or_a_shared_slab_falls_back_to_a_copy(monkeypatch):
    tables = [_part(rank) for rank in (1, 0)]
    got = _received(tables)
    column = got[0].column("reward")
    assert in_place.claimed([column, column])[0] == [None, None]  # one slab, two columns
    del column
    monkeypatch.setattr(kernel, "alias", lambda addresses, sizes: None)
    run = parts.sorted_parts(got)
    gc.collect()
    assert run.to_pandas().equals(_expected(tables).to_pandas())
    del run
    gc.collect()
    assert _mapped() == 0


def test_a_column_written_into_its_pages_is_not_counted_twice_while_its_parts_live():
    tables = [_part(rank) for rank in (1, 0)]
    got = _received(tables)
    whole = pa.concat_tables(got)
    runs = _runs(whole)
    column = whole.column("reward")
    assert pc.sum(column).is_valid  # every page of its parts read, as a sort's gather does
    held = part_rss()
    out = in_place.sorted_in_place(column, runs, in_place.claimed([column])[0][0])
    assert out.to_pylist() == _expected(tables).column("reward").to_pylist()
    assert part_rss() <= held + 2 * PAGE  # its pages moved to the sorted column, not doubled


def test_a_part_of_numbers_only_or_of_no_rows_reads_back_as_sent():
    numbers = pa.table({"a": pa.array(np.arange(5000)), "b": pa.array(np.ones(5000))}
                       ).replace_schema_metadata({"kept": "yes"})
    empty = pa.table({"a": pa.array(np.arange(0)), "t": pa.array([], pa.string())})
    got = _received([numbers, empty])
    assert got[0].equals(numbers) and got[0].schema.metadata == {b"kept": b"yes"}
    assert got[1].equals(empty) and got[1].num_rows == 0


def test_a_text_column_whose_data_map_is_refused_is_copied_from_its_chunks_intact(monkeypatch):
    tables = [_part(rank) for rank in (1, 0)]
    got = _received(tables)
    whole = pa.concat_tables(got)
    runs = _runs(whole)
    column = whole.column("texts")
    slabs = in_place.claimed([column])[0][0]
    assert len(slabs) == 2  # its offsets, then its data
    real = kernel.alias
    monkeypatch.setattr(kernel, "alias", lambda addresses, sizes: (
        None if addresses == slabs[1][0] else real(addresses, sizes)))
    assert in_place.sorted_in_place(column, runs, slabs) is None
    monkeypatch.setattr(kernel, "alias", real)
    want = _expected(tables).column("texts").to_pylist()
    assert column.take(_order(whole)).to_pylist() == want
    assert in_place.sorted_in_place(column, runs, slabs).to_pylist() == want


def test_a_short_write_of_the_slabs_is_finished_piece_by_piece(monkeypatch):
    real = os.pwritev

    def short(fd: int, pieces: list, at: int) -> int:  # as a write past 2 GB returns
        return real(fd, [memoryview(pieces[0])[:1000]], at)

    monkeypatch.setattr(slabs.os, "pwritev", short)
    table = _part(3)
    got, = _received([table])
    assert got.equals(table)


def test_the_maps_of_live_aliases_stay_within_their_budget(monkeypatch):
    tables = [_part(rank) for rank in (1, 0)]
    got = _received(tables)
    monkeypatch.setattr(in_place, "MAP_BUDGET", 5)  # two slabs a number column, four a text
    whole = pa.concat_tables(got)
    picked, held = in_place.claimed([whole.column(c) for c in ("texts", "reward", "step")])
    assert [slabs is not None for slabs in picked] == [True, False, False]
    del whole, picked, held
    monkeypatch.setattr(in_place, "MAP_BUDGET", 4 + 2 * 6)  # the text and six number columns
    run = parts.sorted_parts(got)
    assert in_place._LIVE[0] == 4 + 2 * 6  # the blobs' text took the copy
    assert run.to_pandas().equals(_expected(tables).to_pandas())
    del run
    gc.collect()
    assert in_place._LIVE[0] == 0 and _mapped() == 0


def test_the_sorted_run_holds_only_its_slabs_of_the_parts_files():
    tables = [_part(rank) for rank in (2, 0, 1)]
    got = _received(tables)
    run = parts.sorted_parts(got)
    gc.collect()
    kept = ("step", "rank", "line", "reward", "small", "ratio", "texts", "blobs")
    held = sum(slabs.page_up(len(buffer)) for table in tables for c in kept
               for buffer in slabs._buffers(table.column(c).combine_chunks()))
    assert part_files() <= held  # the IPC files and the copied columns are gone
    assert run.to_pandas().equals(_expected(tables).to_pandas())


def test_a_small_run_is_copied_and_holds_none_of_its_parts_pages(monkeypatch):
    monkeypatch.setattr(parts, "WHOLE_TAKE_BYTES", 1 << 40)  # below it, maps cost more
    tables = [_part(rank) for rank in (2, 0, 1)]
    got = _received(tables)
    assert _mapped() == 3
    run = parts.sorted_parts(got)
    gc.collect()
    assert _mapped() == 0 and part_files() == 0  # no alias, and every part's file gone
    assert run.to_pandas().equals(_expected(tables).to_pandas())


def test_an_empty_slab_is_no_slab_and_never_the_next_columns_pages():
    full, empty = ([f"t{i}" for i in range(3000)], [""] * 3000)
    tables = [pa.table({"s": pa.array(texts), "x": pa.array(np.arange(3000) + 7 * i)})
              for i, texts in enumerate((full, empty, full))]
    got = _received(tables)
    text = got[1].column("s").chunk(0)
    assert SP.slab_of(text.buffers()[2]) is None  # its 0 bytes start where x's slab does
    whole = pa.concat_tables(got)
    column = whole.column("s")
    picked, held = in_place.claimed([column])  # x not in the sort: its pages must not be
    assert picked == [None]
    assert got[1].column("x").to_pylist() == list(np.arange(3000) + 7)
