"""Per-step tables a run makes over every sample are kept beside its index file, by version."""
import os

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from dump_files import line_of, make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.index import steps as steps_module
from loaders.index.derived import DERIVED_DIR
from loaders.serve import groups as groups_module
from loaders.serve import run as run_module


@pytest.fixture
def root(tmp_path):
    for rank in range(2):
        write_dump(tmp_path / "run" / f"rollout_data_rank_{rank}.jsonl",
                   [make_sample(step, seed=rank * 10 + i, prompt=f"q{i % 3}")
                    for step in range(5) for i in range(6)])
    open_run(tmp_path / "run")  # the index
    return tmp_path / "run"


def _derived(root):
    return sorted(p.name for p in (root / ".rl_board_cache" / DERIVED_DIR).glob("*.parquet"))


def _unmakeable(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("made again")
    monkeypatch.setattr(run_module, "step_stats", fail)


def test_step_stats_are_made_once_and_read_back_by_a_later_open(root, monkeypatch):
    first = open_run(root).trained()
    made = first.step_stats
    health = first.health()
    names = _derived(root)
    assert [n.split(".")[0] for n in names] == ["health_signals", "rank_tokens", "rank_z",
                                                "step_stats"]
    _unmakeable(monkeypatch)
    again = open_run(root).trained()
    pd.testing.assert_frame_equal(again.step_stats, made)
    pd.testing.assert_frame_equal(again.health().signals, health.signals)
    assert again.health().alerts == health.alerts


def test_a_part_keeps_its_own_tables(root):
    run = open_run(root)
    assert not run.part(False).trained().step_stats.empty
    assert [n.split(".")[0] for n in _derived(root)] == ["step_stats"]  # every row trains
    with open(root / "rollout_data_rank_1.jsonl", "ab") as handle:
        handle.write(line_of(make_sample(4, seed=99, validation=True)))
    run = open_run(root)
    assert run.part(True).trained().step_stats[S.SAMPLES].sum() == 1
    assert run.part(False).trained().step_stats[S.SAMPLES].sum() == 60
    assert run.step_stats[S.SAMPLES].sum() == 61
    assert {n.split(".")[0] for n in _derived(root)} == {
        "step_stats", "step_stats-validation=0", "step_stats-validation=1"}


def test_a_planted_table_of_text_is_made_again(root):
    assert not open_run(root).step_stats.empty
    [name] = _derived(root)
    path = root / ".rl_board_cache" / DERIVED_DIR / name
    planted = pd.DataFrame({"samples": ["<script>"]}, index=pd.Index([0], name=S.STEP))
    pq.write_table(pa.Table.from_pandas(planted), path)
    stats = open_run(root).step_stats
    assert stats[S.SAMPLES].dtype == "int64" and stats[S.SAMPLES].sum() == 60


def test_a_new_index_version_replaces_the_tables_of_the_old(root):
    assert not open_run(root).step_stats.empty
    [old] = _derived(root)
    with open(root / "rollout_data_rank_0.jsonl", "ab") as handle:
        handle.write(line_of(make_sample(5, seed=1)))
    grown = open_run(root)
    assert grown.cache == "partial" and grown.step_stats.loc[5, S.SAMPLES] == 1
    [new] = _derived(root)
    assert new != old and new.startswith("step_stats.")


def test_a_derived_dir_that_is_a_link_is_never_written_through(root, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, root / ".rl_board_cache" / DERIVED_DIR)
    stats = open_run(root).step_stats
    assert stats[S.SAMPLES].sum() == 60 and list(elsewhere.iterdir()) == []


def test_a_run_without_an_index_file_keeps_nothing(root, monkeypatch):
    run = open_run(root, use_cache=False)
    assert run.step_stats[S.SAMPLES].sum() == 60
    assert not (root / ".rl_board_cache" / DERIVED_DIR).exists()
    assert steps_module.step_stats is run_module.step_stats  # the same builder, unpatched


def test_prompt_history_is_kept_by_its_threshold_and_group_key(root, monkeypatch):
    steps, table = open_run(root).trained().groups().history(0.5)
    kept = {n.split(".")[0] for n in _derived(root)}
    assert {n.rsplit("-", 1)[1] for n in kept if n.startswith("prompt_history-")} == {
        "steps", "first"}
    def fail(*args, **kwargs):
        raise AssertionError("made again")
    monkeypatch.setattr(groups_module, "prompt_steps", fail)
    again_steps, again_table = open_run(root).trained().groups().history(0.5)
    pd.testing.assert_frame_equal(again_steps, steps)
    pd.testing.assert_frame_equal(again_table, table)
    with pytest.raises(AssertionError, match="made again"):  # another threshold: its own
        open_run(root).trained().groups().history(0.9)
