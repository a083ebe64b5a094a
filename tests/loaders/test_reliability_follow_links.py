"""Links under a followed run (issue 26 §3, §4): a rank file swapped for a link out of the
dump dir is never read, by the session following it or by a new one; a dangling rank link
is named as a problem; a followed dir that is a link swapped to another run is noticed on
the next poll, not only on Refresh."""
import os

from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.serve.catalog import Catalog
from loaders.serve.follow import Follower

SECRET = "SECRET outside the root"


def _run(tmp_path):
    root = tmp_path / "run"
    for rank in range(2):
        write_dump(root / f"rollout_data_rank_{rank}.jsonl",
                   [make_sample(s, seed=rank) for s in range(3)])
    outside = write_dump(tmp_path / "outside" / "secret.jsonl",
                         [make_sample(s, prompt=SECRET, reward=0.125) for s in range(5)])
    return root, outside


def _swap_for_link(path, target) -> None:
    tmp = path.with_name(".swap")
    os.symlink(target, tmp)
    os.replace(tmp, path)  # atomically, as a rename by the attacker would


def _shown(run) -> bool:
    prompts = run.with_previews(run.samples)[S.PROMPT].astype(str)
    return prompts.str.contains(SECRET).any() or 0.125 in set(run.samples[S.REWARD])


def _reasons(run, rel: str) -> list[str]:
    return [p["reason"] for p in run.problems if p["file"] == rel]


def test_a_followed_rank_file_swapped_for_a_link_out_is_never_read(tmp_path):
    root, outside = _run(tmp_path)
    catalog = Catalog(root)
    follower = Follower(catalog, root)
    assert len(follower.poll().run.samples) == 6
    _swap_for_link(root / "rollout_data_rank_1.jsonl", outside)
    run = follower.poll().run
    assert not _shown(run) and len(run.samples) == 3
    assert _reasons(run, "rollout_data_rank_1.jsonl") == [
        "a link to a file outside the dump dir; file skipped"]
    assert not _shown(catalog.run(root))  # a new session gets the same run
    assert not _shown(catalog.follow(root, walk=True))  # and so does the next walk
    assert not _shown(open_run(root))  # and a new process


def test_a_relative_link_out_swapped_in_while_following_is_never_read(tmp_path):
    root, outside = _run(tmp_path)
    catalog = Catalog(root)
    catalog.run(root)
    _swap_for_link(root / "rollout_data_rank_0.jsonl", os.path.relpath(outside, root))
    run = catalog.follow(root)
    assert not _shown(run) and len(run.samples) == 3


def test_a_dangling_rank_link_is_named_as_a_problem(tmp_path):
    root, _ = _run(tmp_path)
    os.symlink(tmp_path / "gone" / "rollout_data_rank_2.jsonl", root / "rollout_data_rank_2.jsonl")
    os.symlink("rollout_data_rank_9.jsonl", root / "rollout_data_rank_3.jsonl")
    run = open_run(root)
    assert len(run.samples) == 6
    assert _reasons(run, "rollout_data_rank_2.jsonl")
    assert _reasons(run, "rollout_data_rank_3.jsonl")
