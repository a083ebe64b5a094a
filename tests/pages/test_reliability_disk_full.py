"""A full disk (ENOSPC) where the index goes never stops a run from loading: the index goes
to the user cache dir, or nowhere, and the run's problems say so.  The disk is a real full
tmpfs (mounting needs root; without it these tests skip and say why)."""
import errno
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from apptest import board, texts
from dump_files import ROOT, make_sample, write_dump

from loaders import open_run

NAME = "rollout_data_rank_0.jsonl"


def _full_tmpfs(where: Path) -> Path:
    """A 64 KiB tmpfs at `where` holding a 12-sample dump, every other byte taken."""
    where.mkdir(parents=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or 'not root'})")
    write_dump(where / "run" / NAME, [make_sample(i // 4, seed=i) for i in range(12)])
    with open(where / "filler", "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 1024)
        except OSError as err:
            assert err.errno == errno.ENOSPC
    return where / "run"


@pytest.fixture
def full():
    # not under tmp_path: another pytest session on this machine may rename that dir away
    # (its basetemp rotation), and the mount with it, so the unmount would miss it
    mount = Path(tempfile.mkdtemp(prefix="rl-board-full-"))
    try:
        yield _full_tmpfs(mount / "full")
    finally:
        subprocess.run(["umount", "-l", str(mount / "full")], capture_output=True)
        shutil.rmtree(mount, ignore_errors=True)


def test_the_index_goes_to_the_user_cache_dir_when_the_dump_disk_is_full(full, tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("RL_BOARD_CACHE_DIR", str(tmp_path / "cache"))
    run = open_run(full)
    assert len(run.samples) == 12 and run.index_path is not None
    assert (tmp_path / "cache") in run.index_path.parents
    notes = [p["reason"] for p in run.problems if p.get("index")]
    assert any("No space left on device" in n and "kept in" in n for n in notes), notes
    assert open_run(full).cache == "hit"  # read back from the user cache dir


def test_a_run_loads_without_a_cache_when_no_disk_has_room(full, monkeypatch):
    monkeypatch.setenv("RL_BOARD_CACHE_DIR", str(full.parent / "cache"))  # full as well
    for _ in range(2):
        run = open_run(full)
        assert len(run.samples) == 12 and run.index_path is None and run.cache == "miss"
        notes = " ".join(p["reason"] for p in run.problems if p.get("index"))
        assert "No space left on device" in notes and "without a cache" in notes
    assert not (full / ".rl_board_cache" / "index.parquet").exists()


def test_the_cli_loads_a_run_on_a_full_disk_and_says_so(full):
    env = {**os.environ, "RL_BOARD_CACHE_DIR": str(full.parent / "cache"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "loaders", str(full)], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "12 samples" in done.stdout and "No space left on device" in done.stdout


def test_the_board_shows_a_run_on_a_full_disk_and_says_so(full, monkeypatch):
    monkeypatch.setenv("RL_BOARD_CACHE_DIR", str(full.parent / "cache"))
    at = board(full)
    assert not at.exception and not at.error
    shown = texts(at)
    assert "12 samples" in shown and "index not written" in shown
