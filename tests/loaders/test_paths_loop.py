"""A symlink loop among the dump files is passed over; the walk and the good files stay."""
import os

from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.find.paths import inside


def test_inside_is_false_for_a_looping_link(tmp_path):
    os.symlink("x.jsonl", tmp_path / "x.jsonl")
    os.symlink(tmp_path / "b", tmp_path / "a")
    os.symlink(tmp_path / "a", tmp_path / "b")
    assert not inside(tmp_path / "x.jsonl", tmp_path)
    assert not inside(tmp_path / "a", tmp_path)
    assert inside(tmp_path / "plain.jsonl", tmp_path)


def test_a_dump_dir_with_a_looping_link_loads_its_good_files(tmp_path):
    root = tmp_path / "run"
    for rank in range(2):
        write_dump(root / f"rollout_data_rank_{rank}.jsonl",
                   [make_sample(step, seed=rank) for step in range(3)])
    os.symlink("x.jsonl", root / "x.jsonl")  # points at itself
    run = open_run(root)
    assert sorted(run.samples[S.FILE].unique()) == ["rollout_data_rank_0.jsonl",
                                                    "rollout_data_rank_1.jsonl"]
    assert len(run.samples) == 6 and run.steps == [0, 1, 2]
