"""The index cache dir: never written through a link, a plain file in its place moves the
index to the user cache dir (with a note), and temp files left by a crash are removed."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from loaders import open_run


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RL_BOARD_CACHE_DIR", str(tmp_path / "user_cache"))
    return tmp_path / "user_cache"


def _notes(run: object) -> list[str]:
    return [p["reason"] for p in run.problems if ".rl_board_cache" in p["reason"]]


def test_a_linked_cache_dir_is_never_written_through(dump_dir, tmp_path, user_cache):
    target = tmp_path / "elsewhere"
    target.mkdir()
    os.symlink(target, dump_dir / ".rl_board_cache")
    run = open_run(dump_dir)
    assert list(target.iterdir()) == []
    assert run.index_path is not None and user_cache in run.index_path.parents
    assert _notes(run) and "symbolic link" in _notes(run)[0]
    again = open_run(dump_dir)
    assert again.cache == "hit" and _notes(again)  # said on every open, never stored
    assert list(target.iterdir()) == []


def test_a_link_swapped_in_after_the_check_is_not_followed(dump_dir, tmp_path, user_cache,
                                                           monkeypatch):
    from loaders.index import cachedir  # here: the module is new with this behaviour

    target = tmp_path / "elsewhere"
    target.mkdir()
    real_locate = cachedir.locate

    def swapped(root: Path) -> cachedir.Place:
        place = real_locate(root)
        if not (dump_dir / ".rl_board_cache").is_symlink():
            os.symlink(target, dump_dir / ".rl_board_cache")
        return place

    monkeypatch.setattr("loaders.index.index_file.locate", swapped)
    run = open_run(dump_dir)
    assert list(target.iterdir()) == []
    assert run.index_path is not None and user_cache in run.index_path.parents


def test_a_cache_dir_that_is_a_file_moves_the_index_to_the_user_cache(dump_dir, user_cache):
    (dump_dir / ".rl_board_cache").write_bytes(b"not a dir")
    run = open_run(dump_dir)
    assert run.index_path is not None and user_cache in run.index_path.parents
    assert _notes(run) and "not a directory" in _notes(run)[0]
    assert open_run(dump_dir).cache == "hit"
    assert (dump_dir / ".rl_board_cache").read_bytes() == b"not a dir"


def test_xdg_cache_home_is_the_fallback_without_rl_board_cache_dir(dump_dir, tmp_path,
                                                                    monkeypatch):
    monkeypatch.delenv("RL_BOARD_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    (dump_dir / ".rl_board_cache").write_bytes(b"")
    run = open_run(dump_dir)
    assert run.index_path.parent.parent == tmp_path / "xdg" / "rl_logging_board"


def test_temp_files_a_crash_left_are_removed_but_not_a_live_writers(dump_dir):
    cache = dump_dir / ".rl_board_cache"
    cache.mkdir()
    old, young = cache / ".index-crashed.tmp", cache / ".index-writing.tmp"
    old.write_bytes(b"half")
    young.write_bytes(b"half")
    an_hour_ago = time.time() - 3600
    os.utime(old, (an_hour_ago, an_hour_ago))
    open_run(dump_dir)
    assert not old.exists() and young.exists()
    assert sorted(p.name for p in cache.iterdir()) == [".index-writing.tmp", "index.parquet"]
