import os

import pyarrow.parquet as pq
import pytest

from loaders import open_run
from loaders import schema as S
from loaders.index import ondisk as index


def test_index_lives_next_to_the_dump(dump_dir):
    run = open_run(dump_dir)
    assert run.index_path == dump_dir / ".rl_board_cache" / "index.parquet"
    assert run.index_path.exists()


def test_interrupted_write_keeps_the_old_index(dump_dir, monkeypatch):
    open_run(dump_dir)
    path = dump_dir / ".rl_board_cache" / "index.parquet"
    before = path.read_bytes()
    with open(dump_dir / "rollout_data_rank_0.jsonl", "ab") as handle:
        handle.write(b'{"step": 9}\n')

    def crash(table, where, **kwargs):
        where.write(b"PAR1 half a file")
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", crash)
    monkeypatch.setenv("RL_BOARD_CACHE_DIR", str(dump_dir.parent / "user_cache"))
    crashed = open_run(dump_dir)  # the run loads all the same, and says why it is not cached
    assert 9 in set(crashed.samples[S.STEP]) and crashed.index_path is None
    assert any("disk full" in p["reason"] for p in crashed.problems if p.get("index"))
    assert path.read_bytes() == before
    assert [p.name for p in path.parent.iterdir()] == ["index.parquet"]
    monkeypatch.undo()
    run = open_run(dump_dir)
    assert run.cache == "partial" and 9 in set(run.samples[S.STEP])


def test_corrupt_index_is_rebuilt(dump_dir):
    run = open_run(dump_dir)
    run.index_path.write_bytes(b"garbage")
    again = open_run(dump_dir)
    assert again.cache == "miss" and again.size == run.size


def test_index_of_another_version_is_ignored(dump_dir, monkeypatch):
    open_run(dump_dir)
    monkeypatch.setattr(index, "INDEX_VERSION", index.INDEX_VERSION + 1)
    assert open_run(dump_dir).cache == "miss"


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_dump_uses_user_cache_dir_chmod(dump_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("RL_BOARD_CACHE_DIR", str(tmp_path / "cache"))
    dump_dir.chmod(0o555)
    try:
        run = open_run(dump_dir)
    finally:
        dump_dir.chmod(0o755)
    assert str(run.index_path).startswith(str(tmp_path / "cache"))


def test_read_only_dump_uses_user_cache_dir(dump_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("RL_BOARD_CACHE_DIR", str(tmp_path / "cache"))
    real_access = os.access
    monkeypatch.setattr(index.os, "access",
                        lambda p, mode: False if str(p).startswith(str(dump_dir)) and
                        mode == os.W_OK else real_access(p, mode))
    first = open_run(dump_dir)
    assert str(first.index_path).startswith(str(tmp_path / "cache"))
    assert not (dump_dir / ".rl_board_cache").exists()
    assert open_run(dump_dir).cache == "hit"
