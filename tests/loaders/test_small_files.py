"""Many small files are scanned in bundles (one task, one batch, one frame for many files),
with the same rows, problems and file states as a file-by-file parse."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from dump_files import line_of, make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.index import chunk as C
from loaders.index.ondisk import content_hashes

FILES = 40


def _small_dir(root: Path) -> Path:
    for i in range(FILES):
        samples = [make_sample(s, n=3 + i % 4, seed=i) for s in range(2)]
        extra = b""
        if i % 7 == 3:
            extra = b'{"step": "x"}\n'  # a bad line in the middle of a bundle
        if i % 11 == 5:
            extra = line_of(make_sample(9))[:25]  # a pending half line at the end
        write_dump(root / f"rollout_data_rank_{i}.jsonl", samples, extra)
    write_dump(root / "extra" / "verl" / "3.jsonl", [{"input": "q", "output": "a", "score": 1.0,
                                                     "step": 3, "acc": 1.0}])
    return root


def _tasks(monkeypatch: pytest.MonkeyPatch) -> list:
    seen: list = []
    real = __import__("loaders.index.pool", fromlist=["scan_chunk"]).scan_chunk
    monkeypatch.setattr("loaders.index.pool.scan_chunk", lambda t: seen.append(t) or real(t))
    return seen


def _file_by_file(root: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    with monkeypatch.context() as patch:
        patch.setattr(C, "SMALL_CHUNK_BYTES", -1)  # no chunk is small: no bundles
        return open_run(root, use_cache=False)


def _same(run: object, expected: object) -> None:
    pd.testing.assert_frame_equal(run.samples, expected.samples)
    key = lambda p: (p["file"], p["line"], p["reason"])  # noqa: E731
    assert sorted(run.problems, key=key) == sorted(expected.problems, key=key)
    strip = lambda files: {rel: (s.parsed_until, s.lines, s.hashes(), s.bad_lines,  # noqa: E731
                                 s.pending_bytes, s.ends_mid_line, s.format)
                           for rel, s in files.items()}
    assert strip(run.files) == strip(expected.files)


def test_small_files_are_scanned_in_bundles(tmp_path, monkeypatch):
    root = _small_dir(tmp_path / "run")
    tasks = _tasks(monkeypatch)
    run = open_run(root)
    assert len(tasks) == 1 and isinstance(tasks[0], C.Bundle)
    assert len(tasks[0].parts) == FILES + 1
    _same(run, _file_by_file(root, monkeypatch))


def test_grown_small_files_are_bundled_from_where_they_stopped(tmp_path, monkeypatch):
    root = _small_dir(tmp_path / "run")
    open_run(root)
    for i in (0, 5, 6, 17):
        with open(root / f"rollout_data_rank_{i}.jsonl", "ab") as handle:
            handle.write(line_of(make_sample(4, seed=i)) + line_of(make_sample(5, seed=i)))
    tasks = _tasks(monkeypatch)
    run = open_run(root)
    assert run.cache == "partial" and len(tasks) == 1
    assert sorted(p.rel for p in tasks[0].parts) == [f"rollout_data_rank_{i}.jsonl"
                                                     for i in (0, 17, 5, 6)]
    assert min(p.start for p in tasks[0].parts) > 0
    _same(run, _file_by_file(root, monkeypatch))
    rows = run.samples[run.samples[S.FILE] == "rollout_data_rank_17.jsonl"]
    assert list(rows[S.LINE]) == [1, 2, 4, 5]  # its line 3 is bad


def test_the_hashes_a_worker_took_are_those_of_the_file(tmp_path):
    root = _small_dir(tmp_path / "run")
    run = open_run(root)
    for rel, state in run.files.items():
        assert state.hashes() == content_hashes(root / rel, state.parsed_until), rel


def test_bundles_stay_near_their_size(tmp_path):
    chunks = [C.Chunk(str(tmp_path / f"{i}"), f"{i}", i, 0, 300 << 10) for i in range(30)]
    big = C.Chunk(str(tmp_path / "big"), "big", 0, 0, 8 << 20)
    tasks = C.bundled([*chunks[:10], big, *chunks[10:]])
    assert tasks[0] is big
    sizes = [task.nbytes for task in tasks[1:]]
    assert all(isinstance(t, C.Bundle) for t in tasks[1:]) and sum(sizes) == 30 * (300 << 10)
    assert max(sizes) < C.BUNDLE_BYTES + (300 << 10)
    assert [c.rel for t in tasks[1:] for c in t.parts] == [c.rel for c in chunks]


def test_tabular_files_of_a_few_megabytes_are_bundled_and_jsonl_ones_are_not():
    """A board Parquet file's bytes are no parse (its footer may hold its summary): files of
    up to 4 MB go in bundles of about 16 MB; JSONL files of 2 MB are a task each."""
    def files(fmt: str, ext: str) -> list[C.Chunk]:
        return [C.Chunk(f"/d/r{i}.{ext}", f"r{i}.{ext}", i, 0, 2 << 20, False, fmt)
                for i in range(20)]

    parquet = C.bundled(files("board_parquet", "parquet"))
    assert [len(t.parts) if isinstance(t, C.Bundle) else 1 for t in parquet] == [8, 8, 4]
    assert [t.rel for t in parquet[0].parts] == [f"r{i}.parquet" for i in range(8)]
    assert C.bundled(files("native", "jsonl")) == files("native", "jsonl")
    big = [C.Chunk("/d/big.parquet", "big.parquet", 0, 0, 5 << 20, False, "board_parquet")]
    assert C.bundled(big + files("board_parquet", "parquet")[:2])[0] == big[0]
