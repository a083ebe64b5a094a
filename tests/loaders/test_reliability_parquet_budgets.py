"""One Parquet file never takes the loader down: a footer claiming 3e9 rows, 20 M rows of one
dictionary value or 2 M rows in a few kilobytes, a 1 GiB text cell, a dictionary value that
decodes to 150 GB from 150 KB of pages.  Each is loaded beside
good files in a process under a 2 GiB address-space limit (tests/bomb_files.py): the bomb is
one problem naming its budget, checked from the footer before any row is decoded, and the
good samples load."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from bomb_files import claim_rows, load_limited, problems_of
from dump_files import make_sample, write_dump
from format_fixtures import trl

from loaders.parse.footer import checked_metadata
from loaders.writer.convert import convert

BOMB = "completions/completions_00030.parquet"


def _trl_rows(rows: int, **columns: pa.Array) -> pa.Table:
    return pa.table({"step": pa.array(np.full(rows, 30)), "prompt": pa.array(["q"] * rows),
                     "completion": pa.array(["c"] * rows), **columns})


def _claims_3e9_rows(path: Path) -> None:
    pq.write_table(_trl_rows(1234), path)
    claim_rows(path, 1234, 3_000_000_000)


def _dictionary_rows(path: Path) -> None:
    """20 M rows of one 100-character text: ~2 GB as strings, ~0.1 MB on disk."""
    codes = pa.array(np.zeros(20_000_000, dtype=np.int32))
    one = pa.DictionaryArray.from_arrays(codes, pa.array(["x" * 100]))
    table = pa.table({"step": pa.array(np.full(len(codes), 30, dtype=np.int8)),
                      "prompt": one, "completion": one})
    pq.write_table(table, path, compression="zstd")


def _long_dictionary_value(path: Path) -> None:
    """500,000 rows of one 300 KB text: every budget of the footer holds (3 rows a byte on
    disk, 150 KB of pages), but the text decodes to 150 GB."""
    codes = pa.array(np.zeros(500_000, dtype=np.int32))
    text = np.random.default_rng(0).bytes(150_000).hex()  # incompressible: the file's size
    one = pa.DictionaryArray.from_arrays(codes, pa.array([text]))
    table = pa.table({"step": pa.array(np.full(len(codes), 30, dtype=np.int8)),
                      "prompt": pa.array(np.full(len(codes), "q")), "completion": one})
    pq.write_table(table, path, compression="zstd", row_group_size=len(codes))


def _many_rows_few_bytes(path: Path) -> None:
    """2 M rows in ~30 KB: 4.7 GB and 80 s to read as records."""
    rows = 2_000_000
    pq.write_table(_trl_rows(rows), path, compression="zstd")


def _gigabyte_cell(path: Path) -> None:
    """One completion of 1 GiB (of zeros: ~50 KB once compressed)."""
    size = 1 << 30
    cell = pa.StringArray.from_buffers(1, pa.py_buffer(np.array([0, size], np.int32)),
                                       pa.py_buffer(bytes(size)))
    pq.write_table(pa.table({"step": [30], "prompt": ["q"], "completion": cell}), path,
                   compression="zstd")


@pytest.mark.parametrize(("write", "reason"), [
    (_claims_3e9_rows, "over budget: Parquet rows 3,000,000,000"),
    (_dictionary_rows, "over budget: Parquet rows 20,000,000"),
    (_long_dictionary_value, "over budget: decoded text bytes of the row groups read"),
    (_many_rows_few_bytes, "over budget: Parquet rows for a file of"),
    (_gigabyte_cell, "over budget: decoded bytes of row group 0"),
])
def test_a_parquet_bomb_is_one_problem_and_the_run_loads(tmp_path, write, reason):
    root = trl(tmp_path / "run")  # 6 good samples
    write(root / BOMB)
    assert (root / BOMB).stat().st_size < 2 << 20
    summary = load_limited(root)
    assert summary["samples"] == 6
    problems = problems_of(summary, BOMB)
    assert len(problems) == 1 and reason in problems[0], problems


def test_a_board_parquet_dump_claiming_3e9_rows_is_one_problem(tmp_path):
    src, root = tmp_path / "src", tmp_path / "run"
    write_dump(src / "rollout_data_rank_0.jsonl", [make_sample(s, seed=i)
                                                   for s in (0, 1) for i in range(1234)])
    written = convert(src, root, flush_rows=1234).written  # a file a step
    bomb = claim_rows(written[0], 1234, 3_000_000_000)
    summary = load_limited(root)
    assert summary["samples"] == 1234
    rel = bomb.relative_to(root).as_posix()
    assert any("over budget: Parquet rows 3,000,000,000" in p for p in problems_of(summary, rel))


def test_a_real_file_is_within_the_footer_budgets(tmp_path):
    """The budgets refuse claims, not files: 100,000 rows of real text read."""
    path = tmp_path / "completions_00001.parquet"
    rows = 100_000
    pq.write_table(_trl_rows(rows, completion=pa.array([f"answer {i}" for i in range(rows)])),
                   path)
    with open(path, "rb") as source:
        assert checked_metadata(source).num_rows == rows


def test_text_counted_from_dictionaries_is_exact_when_the_bound_is_not_enough(tmp_path):
    """Many rows of a short value and one of a long one: the bound (longest x rows) is past
    the budget, the text itself is not: the file reads, decoded, as written."""
    from loaders import limits
    from loaders.parse.footer import opened, read_checked

    rows = 200_000
    values = ["s"] * (rows - 1) + ["L" * 4000]
    path = tmp_path / "mixed.parquet"
    noise = np.random.default_rng(1).random(rows)  # bytes enough on disk for its rows
    pq.write_table(pa.table({"text": pa.array(values).dictionary_encode(), "x": noise}), path)
    assert 4000 * rows > limits.MAX_ROW_GROUP_BYTES  # the bound alone would refuse it
    with open(path, "rb") as source:
        table = read_checked(opened(source))
    assert table.column("text").type == pa.string() and table.column("text").to_pylist() == values


def test_a_checked_read_gives_back_the_types_as_written(tmp_path):
    """Texts read as dictionaries to be counted come back as they were written: top level, in
    lists and in maps (a struct's texts are read plain: Arrow reads no dictionary there)."""
    from loaders.parse.footer import opened, read_checked

    table = pa.table({
        "text": ["a", "b", "a"], "tokens": [["x", "y"], ["x"], []],
        "tags": pa.array([[("k", "v")], [], [("k", "w")]], pa.map_(pa.string(), pa.string())),
        "meta": [{"name": "n1", "n": 1}, {"name": "n2", "n": 2}, {"name": "n1", "n": 3}],
        "step": [1, 2, 3]})
    path = tmp_path / "types.parquet"
    pq.write_table(table, path)
    with open(path, "rb") as source:
        read = read_checked(opened(source))
    assert read.schema.equals(table.schema) and read.to_pylist() == table.to_pylist()
