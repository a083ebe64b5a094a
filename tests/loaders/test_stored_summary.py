"""A Parquet dump's summary stored by the writer: the same index as the rows give, or none.

Each test writes its dump with the real DumpWriter (pyarrow) and reads it with the real
index, once through the stored summary and once with RL_BOARD_STORED_SUMMARY=0 (the rows
read and summarized as they always were), column for column.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from loaders import schema as S
from loaders.find.walk import scan
from loaders.index import scan_board, stored_summary
from loaders.index.previews import stored_frame
from loaders.index.refresh import refresh
from loaders.parse import columnar
from loaders.writer import DumpWriter

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "samples"))
from generate_dump import make_batch, make_world  # noqa: E402


def _odd_samples(step: int) -> list[dict]:
    """What a real run holds besides plain samples: NaN and null tokens, a missing
    reference, extra scalars and ids, a finish reason, an empty response."""
    world = make_world(0, 12, 96, 2, group_size=4)
    batch = make_batch(world, np.random.default_rng([7, step]), step, 12, 4)
    batch[0]["logprobs"] = [float("nan"), *batch[0]["logprobs"][1:]]
    batch[1].pop("ref_logprobs")
    batch[2]["values"] = [None, *batch[2]["values"][1:]]
    for i, sample in enumerate(batch):
        sample.update(uid=f"g{i // 4}", finish_reason="length" if i % 5 == 0 else "stop",
                      acc=float(i % 2), note=f"n{i}")
    batch[3].update(response="", response_tokens=[], logprobs=[], ref_logprobs=[])
    return batch


def _write(root: Path, validation: bool = False) -> Path:
    with DumpWriter(root, rank=2, format="parquet", validation=validation) as writer:
        for step in range(2):
            writer.write_many(_odd_samples(step))
    return root


def _index(root: Path, monkeypatch: pytest.MonkeyPatch, stored: bool) -> tuple[pd.DataFrame,
                                                                               list]:
    monkeypatch.setenv("RL_BOARD_STORED_SUMMARY", "1" if stored else "0")
    fresh, _ = refresh(list(scan(root.resolve()).dumps), None)
    return stored_frame(fresh.frame, fresh.previews), fresh.problems  # as the file holds it


def _rows_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the rows the index decodes from Parquet (none through a stored summary)."""
    read: list[int] = []
    real = scan_board.records
    monkeypatch.setattr(scan_board, "records", lambda table, *a: read.append(
        table.num_rows) or real(table, *a))
    return read


def assert_same_index(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns) and len(a) == len(b) > 0
    for name in a.columns:
        if a[name].dtype == object:  # the token digest's bytes
            assert a[name].tolist() == b[name].tolist(), name
        else:
            pd.testing.assert_series_equal(a[name], b[name], check_exact=True, obj=name)


@pytest.mark.parametrize("validation", [False, True])
def test_a_stored_summary_indexes_as_the_rows_do(tmp_path, monkeypatch, validation):
    root = _write(tmp_path / "dump", validation)
    files = sorted(root.glob("*.parquet"))
    assert len(files) == 2 and all(
        stored_summary.KEY in pq.read_metadata(f).metadata for f in files)
    read = _rows_read(monkeypatch)
    stored, stored_problems = _index(root, monkeypatch, stored=True)
    assert read == []  # no row decoded: the footers held the summary
    parsed, parsed_problems = _index(root, monkeypatch, stored=False)
    assert sum(read) == 24
    assert stored_problems == parsed_problems == []
    assert_same_index(stored, parsed)
    assert stored[S.VALIDATION].all() == validation
    assert stored[S.TOKEN_DIGEST].notna().sum() == 2  # one digest a file (a step)


def test_rows_with_a_problem_store_none_and_the_problem_is_shown(tmp_path, monkeypatch):
    samples = _odd_samples(0)
    samples[5]["reward"] = "high"  # not a number: a problem with its file and row
    with DumpWriter(tmp_path, rank=0, format="parquet") as writer:
        writer.write_many(samples)
    path = next(tmp_path.glob("*.parquet"))
    assert stored_summary.KEY not in (pq.read_metadata(path).metadata or {})
    frame, problems = _index(tmp_path, monkeypatch, stored=True)
    assert len(frame) == 12
    assert [(p["file"], p["line"]) for p in problems] == [(path.name, 6)]
    assert "reward" in problems[0]["reason"]


def test_a_summary_another_board_or_another_place_would_make_is_not_used(
        tmp_path, monkeypatch):
    root = _write(tmp_path / "dump")
    moved = tmp_path / "moved"
    (moved / "step_7").mkdir(parents=True)  # a dir that names a step: the file's context
    name = next(root.glob("*.parquet")).name
    shutil.copy(root / name, moved / "step_7" / name)
    renamed = name.replace("rank_2", "rank_5")  # another rank than the writer's
    shutil.copy(root / name, moved / renamed)
    read = _rows_read(monkeypatch)
    frame, _ = _index(moved, monkeypatch, stored=True)
    assert sum(read) == 24 and sorted(frame[S.RANK].unique()) == [2, 5]
    read.clear()
    # a newer board whose index moved but whose summary did not (INDEX_VERSION 20): the
    # stored summary still serves, as the cold index of a dump written before
    monkeypatch.setattr(S, "INDEX_VERSION", S.INDEX_VERSION + 1)
    _index(root, monkeypatch, stored=True)
    assert sum(read) == 0
    monkeypatch.setattr(S, "SUMMARY_VERSION", S.SUMMARY_VERSION + 1)  # its summary moved
    _index(root, monkeypatch, stored=True)
    assert sum(read) == 24


def _with_footer(path: Path, blob: bytes) -> None:
    """The file rewritten with `blob` as its stored summary (rows and columns kept)."""
    table = pq.read_table(path)
    with pq.ParquetWriter(path, table.schema) as writer:
        writer.write_table(table, row_group_size=64)
        writer.add_key_value_metadata({stored_summary.KEY: blob})


def _stream(table: pa.Table, compression: str | None) -> bytes:
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression=compression)
    with pa.ipc.new_stream(sink, table.schema, options=options) as stream:
        stream.write_table(table)
    return sink.getvalue().to_pybytes()


def _bomb() -> bytes:
    """A packed summary that claims 250x its bytes (a block of zeros): refused unread."""
    zeros = bytes(10 << 20)
    return stored_summary.packed(zeros)


@pytest.mark.parametrize("odd", ["zstd", "lz4", "garbage", "cut", "rows", "bomb", "size",
                                 "hash", "plain"])
def test_a_compressed_or_broken_summary_is_refused_and_the_rows_are_read(
        tmp_path, monkeypatch, odd):
    root = _write(tmp_path / "dump")
    path = next(root.glob("*.parquet"))
    stream = stored_summary.unpacked(pq.read_metadata(path).metadata[stored_summary.KEY])
    real = pa.ipc.open_stream(stream).read_all()
    pack = stored_summary.packed
    assert stored_summary.stored_rows({stored_summary.KEY: pack(_stream(real, None))}, 12,
                                      _chunk(path), 0, 12) is not None  # the control
    blob = {"zstd": lambda: pack(_stream(real, "zstd")), "lz4": lambda: pack(_stream(
        real, "lz4")), "garbage": lambda: b"\xff" * 64,
            "cut": lambda: pack(_stream(real, None)[:-100]),
            "rows": lambda: pack(_stream(real.slice(0, 11), None)), "bomb": _bomb,
            "size": lambda: (len(stream) + 8).to_bytes(8, "little") + pack(stream)[8:],
            "hash": lambda: pack(stream)[:8] + bytes(8) + pack(stream)[16:],
            "plain": lambda: stream}[odd]()  # an unpacked stream: no size first
    _with_footer(path, blob)
    assert stored_summary.stored_rows(pq.read_metadata(path).metadata, 12, _chunk(path), 0,
                                      12) is None
    read = _rows_read(monkeypatch)
    frame, problems = _index(root, monkeypatch, stored=True)
    assert sum(read) == 12 and problems == []  # that file's rows, summarized as read
    assert_same_index(frame, _index(root, monkeypatch, stored=False)[0])


def _chunk(path: Path) -> scan_board.Chunk:
    return scan_board.Chunk(str(path), path.name, 2, 0, path.stat().st_size,
                            format="board_parquet")


def test_a_writer_copied_without_the_board_stores_none(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "loaders.index.footer_summary", None)  # import fails
    _write(tmp_path)
    monkeypatch.undo()
    assert all(stored_summary.KEY not in (pq.read_metadata(f).metadata or {})
               for f in tmp_path.glob("*.parquet"))
    read = _rows_read(monkeypatch)
    frame, _ = _index(tmp_path, monkeypatch, stored=True)
    assert sum(read) == 24 and len(frame) == 24


def test_a_sample_read_back_never_sees_the_summary(tmp_path):
    root = _write(tmp_path)
    path = next(root.glob("*.parquet"))
    (record, _), = columnar.read_rows(path, [4])
    assert set(record) <= set(_odd_samples(0)[4])


def test_an_empty_token_list_keeps_the_token_column_a_list_of_strings(tmp_path):
    _write(tmp_path)  # one sample of each file has no tokens at all
    for path in tmp_path.glob("*.parquet"):
        schema = pq.read_schema(path)
        assert schema.field(S.RESPONSE_TOKENS).type == pa.list_(pa.string())
        assert schema.field(S.LOGPROBS).type == pa.list_(pa.float32())
        assert columnar.json_columns(schema) == frozenset()


def _replaced(table: pa.Table, name: str, column: pa.Array) -> pa.Table:
    return table.set_column(table.schema.get_field_index(name), name, column)


@pytest.mark.parametrize("odd", ["located", "step_text", "reward_struct", "dictionary",
                                 "twice", "missing"])
def test_a_summary_of_other_columns_or_types_is_refused(tmp_path, monkeypatch, odd):
    """What a hand-written footer could hold to break the run's merge, or to make a few
    bytes expand once decoded (a dictionary of one huge text on every row)."""
    root = _write(tmp_path / "dump")
    path = next(root.glob("*.parquet"))
    real = pa.ipc.open_stream(stored_summary.unpacked(pq.read_metadata(path).metadata[
        stored_summary.KEY])).read_all()
    n = real.num_rows
    table = {
        "located": lambda: real.append_column(S.FILE, pa.array(["x"] * n)),
        "step_text": lambda: _replaced(real, S.STEP, pa.array(["1"] * n)),
        "reward_struct": lambda: _replaced(real, S.REWARD, pa.array([{"a": 1}] * n)),
        "dictionary": lambda: _replaced(real, S.RESPONSE, pa.DictionaryArray.from_arrays(
            pa.array([0] * n, pa.int8()), pa.array(["x" * 1000]))),
        "twice": lambda: real.append_column(S.REWARD, real.column(S.REWARD)),
        "missing": lambda: real.drop_columns([S.STEP]),
    }[odd]()
    assert stored_summary.as_made(real.schema)  # the good schema, last accepted: the odd
    # one right after is still checked field by field, not waved through as a run's own
    _with_footer(path, stored_summary.packed(_stream(table, None)))
    assert stored_summary.stored_rows(pq.read_metadata(path).metadata, n, _chunk(path), 0,
                                      n) is None
    frame, problems = _index(root, monkeypatch, stored=True)  # the rows, read as ever
    assert problems == [] and len(frame) == 24
    assert_same_index(frame, _index(root, monkeypatch, stored=False)[0])
