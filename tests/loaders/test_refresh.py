"""Cache behaviour through open_run: hit, growth, pending lines, rewrites."""
import os

import pytest
from dump_files import line_of, make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.index.chunk import ChunkResult


def _append(path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


def _bump_mtime(path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))


def test_first_open_is_a_miss_then_a_hit(dump_dir):
    first = open_run(dump_dir)
    again = open_run(dump_dir)
    assert (first.cache, again.cache) == ("miss", "hit")
    assert len(again.samples) == len(first.samples) == 24
    assert again.samples[S.LOG_RATIO_MEAN].equals(first.samples[S.LOG_RATIO_MEAN])


def test_hit_parses_nothing(dump_dir, monkeypatch):
    open_run(dump_dir)
    monkeypatch.setattr("loaders.index.pool.scan_chunk", _fail_scan)
    assert open_run(dump_dir).cache == "hit"


def _fail_scan(chunk) -> ChunkResult:
    raise AssertionError(f"parsed {chunk}")


def test_grown_file_parses_only_new_bytes(dump_dir, monkeypatch):
    open_run(dump_dir)
    path = dump_dir / "rollout_data_rank_1.jsonl"
    old_size = path.stat().st_size
    _append(path, line_of(make_sample(3, seed=5)) + line_of(make_sample(3, seed=6)))
    seen = []
    real = __import__("loaders.index.pool", fromlist=["scan_chunk"]).scan_chunk
    monkeypatch.setattr("loaders.index.pool.scan_chunk", lambda c: seen.append(c) or real(c))
    run = open_run(dump_dir)
    assert run.cache == "partial"
    assert [(c.rel, c.start) for c in seen] == [("rollout_data_rank_1.jsonl", old_size)]
    grown = run.samples[run.samples[S.STEP] == 3]
    assert list(grown[S.LINE]) == [13, 14] and set(grown[S.FILE]) == {path.name}
    assert len(run.samples) == 26


def test_pending_line_is_picked_up_when_complete(dump_dir):
    path = dump_dir / "rollout_data_rank_0.jsonl"
    full = line_of(make_sample(3, seed=9))
    _append(path, full[:40])
    run = open_run(dump_dir)
    assert run.bad_lines == 0 and run.pending_bytes == 40 and len(run.samples) == 24
    _append(path, full[40:])
    run = open_run(dump_dir)
    assert run.cache == "partial" and run.pending_bytes == 0 and run.bad_lines == 0
    added = run.samples[run.samples[S.STEP] == 3]
    assert list(added[S.LINE]) == [13]
    assert run.sample(f"{path.name}:13").texts[S.PROMPT] == make_sample(3, seed=9)["prompt"]


def test_line_accepted_without_newline_then_continued(dump_dir):
    path = dump_dir / "rollout_data_rank_0.jsonl"
    _append(path, line_of(make_sample(3, seed=1)).rstrip(b"\n"))
    assert len(open_run(dump_dir).samples) == 25
    _append(path, b"\n" + line_of(make_sample(4, seed=2)))
    run = open_run(dump_dir)
    assert len(run.samples) == 26
    assert list(run.samples[run.samples[S.FILE] == path.name][S.LINE])[-2:] == [13, 14]


def test_rewritten_file_invalidates_its_rows(dump_dir):
    open_run(dump_dir)
    path = dump_dir / "rollout_data_rank_0.jsonl"
    size = path.stat().st_size
    rewritten = b"".join(line_of(make_sample(7, n=5, seed=s)) for s in range(30))
    path.write_bytes(rewritten)
    assert path.stat().st_size > size
    run = open_run(dump_dir)
    rank0 = run.samples[run.samples[S.FILE] == path.name]
    assert run.cache == "partial"
    assert set(rank0[S.STEP]) == {7} and len(rank0) == 30


def test_truncated_file_invalidates_its_rows(dump_dir):
    open_run(dump_dir)
    path = dump_dir / "rollout_data_rank_0.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:5]))
    run = open_run(dump_dir)
    assert len(run.samples[run.samples[S.FILE] == path.name]) == 5
    assert len(run.samples) == 17


def test_removed_file_drops_out_and_new_file_joins(dump_dir):
    open_run(dump_dir)
    (dump_dir / "rollout_data_rank_1.jsonl").unlink()
    write_dump(dump_dir / "sub" / "rollout_data_rank_10.jsonl", [make_sample(0)])
    run = open_run(dump_dir)
    assert set(run.samples[S.FILE]) == {"rollout_data_rank_0.jsonl",
                                        "sub/rollout_data_rank_10.jsonl"}
    assert run.samples[run.samples[S.FILE].str.startswith("sub/")][S.RANK].tolist() == [10]


def test_touched_file_is_not_reparsed(dump_dir, monkeypatch):
    open_run(dump_dir)
    _bump_mtime(dump_dir / "rollout_data_rank_0.jsonl")
    monkeypatch.setattr("loaders.index.pool.scan_chunk", _fail_scan)
    run = open_run(dump_dir)
    assert run.cache == "partial" and len(run.samples) == 24


def test_no_cache_leaves_no_index(dump_dir):
    run = open_run(dump_dir, use_cache=False)
    assert run.cache == "miss" and not (dump_dir / ".rl_board_cache").exists()


@pytest.mark.parametrize("bad_in_middle", [True, False])
def test_bad_lines_counted_once_across_growth(dump_dir, bad_in_middle):
    path = dump_dir / "rollout_data_rank_0.jsonl"
    _append(path, b"not json\n" if bad_in_middle else b"")
    first = open_run(dump_dir)
    _append(path, b"{broken\n" + line_of(make_sample(5)))
    run = open_run(dump_dir)
    assert run.bad_lines == first.bad_lines + 1
    assert [p["line"] for p in run.problems][-1] == (14 if bad_in_middle else 13)
