"""Odd entries in the walk: links in a loop, linked dir loops, FIFOs, a very deep tree.  Each
is passed over or named as a problem of the run; none stops the walk of the rest."""
from __future__ import annotations

import os
from pathlib import Path

from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.find.walk import scan

GOOD = ["rollout_data_rank_0.jsonl", "sub/rollout_data_rank_1.jsonl"]


def _odd_dir(root: Path) -> Path:
    for rel in GOOD:
        write_dump(root / rel, [make_sample(s) for s in range(3)])
    os.symlink("loop.jsonl", root / "loop.jsonl")  # points at itself
    os.symlink(root / "sub" / "b.jsonl", root / "sub" / "a.jsonl")
    os.symlink(root / "sub" / "a.jsonl", root / "sub" / "b.jsonl")
    os.symlink("dir_loop", root / "dir_loop")
    os.symlink("..", root / "sub" / "up")  # a linked dir that leads back: never walked
    os.mkfifo(root / "fifo.jsonl")
    return root


def test_the_walk_passes_loops_and_fifos_and_keeps_the_rest(tmp_path):
    root = _odd_dir(tmp_path / "run")
    listing = scan(root)
    rels = [d.rel for d in listing.dumps]
    assert [r for r in rels if r in GOOD] == GOOD
    assert not [r for r in rels if r.startswith("sub/up/")]
    sub = listing.under("sub")
    good = [d.rel for d in sub.dumps if d.rel.startswith("rollout")]
    assert good == ["rollout_data_rank_1.jsonl"]


def test_loops_and_fifos_are_problems_of_the_run_that_loads(tmp_path):
    root = _odd_dir(tmp_path / "run")
    run = open_run(root)
    assert sorted(run.samples[S.FILE].unique()) == GOOD and len(run.samples) == 6
    reasons = {p["file"]: p["reason"] for p in run.problems}
    assert "not a regular file" in reasons["fifo.jsonl"]
    for loop in ("loop.jsonl", "sub/a.jsonl", "sub/b.jsonl"):
        assert "cannot read" in reasons[loop]


def test_a_link_leading_out_is_skipped_and_one_staying_in_is_read(tmp_path):
    root = tmp_path / "run"
    write_dump(root / "rollout_data_rank_0.jsonl", [make_sample(0)])
    write_dump(tmp_path / "outside.jsonl", [make_sample(1)])
    os.symlink(tmp_path / "outside.jsonl", root / "out.jsonl")
    os.symlink("rollout_data_rank_0.jsonl", root / "alias.jsonl")
    os.symlink(root, root / "self_dir")
    confined = {d.rel: d.confined for d in scan(root).dumps}
    assert confined == {"alias.jsonl": True, "out.jsonl": False,
                        "rollout_data_rank_0.jsonl": True}
    run = open_run(root)  # the link out is named as a problem, and never read
    assert set(run.samples[S.STEP]) == {0} and run.formats["out.jsonl"] == "unknown"
    assert [p["reason"] for p in run.problems if p["file"] == "out.jsonl"] == [
        "a link to a file outside the dump dir; file skipped"]


def test_a_tree_deeper_than_the_recursion_limit_is_walked(tmp_path):
    root = tmp_path / "run"
    deep = root
    root.mkdir()
    for _ in range(1100):  # one by one: makedirs itself recurses once per level
        deep = deep / "d"
        deep.mkdir()
    try:
        write_dump(deep / "rollout_data_rank_3.jsonl", [make_sample(0)])
        write_dump(root / "rollout_data_rank_0.jsonl", [make_sample(0)])
        dumps = scan(root).dumps
        assert sorted(d.rank for d in dumps) == [0, 3]
    finally:
        _remove_deep(root / "d", deep)


def _remove_deep(top: Path, bottom: Path) -> None:
    """shutil.rmtree (and so pytest's clean-up of old tmp dirs) recurses once per level."""
    for path in bottom.iterdir():
        path.unlink()
    while bottom != top.parent:
        bottom.rmdir()
        bottom = bottom.parent
