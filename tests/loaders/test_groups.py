"""GRPO groups from real dumps the tests write: ids, advantages, flags, left-out samples."""
import math

import numpy as np
import pandas as pd
import pytest
from dump_files import keyed, make_sample, write_dump
from format_fixtures import prime, verl

from loaders import open_run
from loaders import schema as S
from loaders.groups import advantage as A
from loaders.groups.table import mix
from loaders.index.grouping import prompt_id, unpadded
from loaders.serve.groups import GroupOptions


def _run(tmp_path, samples):
    return open_run(write_dump(tmp_path / "run" / "rollout_data_rank_0.jsonl", samples).parent)


@pytest.mark.parametrize("key", ["group_index", "example_id", "problem_id", "uid"])
def test_a_trainer_group_key_names_the_group(tmp_path, key):
    # two groups of the same prompt text: only the trainer's key tells them apart
    samples = [make_sample(1, seed=0, prompt="same", **{key: g}) for g in (7, 7, 8, 8, 8)]
    frame = _run(tmp_path, samples).samples
    assert set(frame[S.GROUP_SOURCE].astype(str)) == {key}
    sizes = sorted(frame.groupby(S.GROUP_ID).size())
    assert sizes == [2, 3] and frame[S.PROMPT_ID].nunique() == 1


def test_without_a_key_the_unpadded_prompt_is_the_group(tmp_path):
    prompts = ["<PAD><PAD>What is 2+2?", "What is 2+2?<pad> ", " What is 2+2?", "Other?"]
    frame = _run(tmp_path, [make_sample(1, prompt=p) for p in prompts]).samples
    assert set(frame[S.GROUP_SOURCE].astype(str)) == {S.GROUP_BY_PROMPT}
    assert frame[S.GROUP_ID].tolist()[:3] == [prompt_id("What is 2+2?")] * 3
    assert frame[S.GROUP_ID].iloc[3] != frame[S.GROUP_ID].iloc[0]
    assert unpadded("<|endoftext|> a <PAD>b<PAD>\n") == "a <PAD>b"


def test_verl_groups_by_prompt_and_prime_by_prompt_token_ids(tmp_path):
    run = open_run(verl(tmp_path / "verl"))
    step = run.part(False).step_rows(1)
    assert step[S.GROUP_ID].nunique() == 3  # three different inputs
    run = open_run(prime(tmp_path / "prime"))
    rows = run.step_rows(1)
    assert len(rows) == 2 and rows[S.GROUP_ID].nunique() == 1  # the same prompt token ids
    assert rows[S.PROMPT].iloc[0] == "0 1"


def test_group_key_option_regroups_by_any_key(tmp_path):
    samples = [make_sample(1, seed=i, team=t) for i, t in enumerate("aabbb")]
    run = _run(tmp_path, samples).trained()
    table = run.groups("team").step(1, GroupOptions()).table
    assert sorted(table[S.GROUP_SIZE]) == [2, 3]
    assert run.groups().step(1, GroupOptions()).table[S.GROUP_SIZE].max() == 1


def test_advantage_formulas_against_hand_computed_values():
    rewards = pd.Series([1.0, 0.0, 0.0, 1.0, 2.0, 5.0])
    groups = [pd.Series([1, 1, 1, 1, 2, 3])]
    std = math.sqrt(1 / 3)  # unbiased std of 1, 0, 0, 1
    np.testing.assert_allclose(A.derived(rewards, groups, A.GRPO)[:4],
                               np.array([0.5, -0.5, -0.5, 0.5]) / (std + 1e-6))
    np.testing.assert_allclose(A.derived(rewards, groups, A.DR_GRPO)[:4], [0.5, -0.5, -0.5, 0.5])
    # RLOO: r minus the mean of the other three: 1 - 1/3, 0 - 2/3
    np.testing.assert_allclose(A.derived(rewards, groups, A.RLOO)[:4],
                               [2 / 3, -2 / 3, -2 / 3, 2 / 3])
    assert A.derived(rewards, groups, A.GRPO)[4:].isna().all()  # groups of one
    with pytest.raises(ValueError):
        A.derived(rewards, groups, "ppo")


def test_the_trainers_advantage_wins(tmp_path):
    run = open_run(prime(tmp_path / "prime")).trained()
    found = run.groups().step(1, GroupOptions())
    assert found.advantage_source == "trainer (advantages_mean)"
    rows = run.groups().rows(1, GroupOptions())
    np.testing.assert_allclose(rows[S.ADVANTAGE], [0.3, 0.3])


def _grouped(rewards_by_group: dict[str, list[float]], step: int = 1, **extra) -> list[dict]:
    return [make_sample(step, seed=i, prompt=name, reward=r, **extra)
            for name, rewards in rewards_by_group.items() for i, r in enumerate(rewards)]


def test_flags_and_mix_on_purpose_built_groups(tmp_path):
    run = _run(tmp_path, _grouped({"flat": [0.3] * 4, "right": [1.0] * 4,
                                   "wrong": [0.0, 0.0, 0.0], "mixed": [1.0, 0.0, 1.0, 0.0],
                                   "alone": [1.0]})).trained()
    table = run.groups().step(1, GroupOptions()).table.set_index(S.PROMPT)
    assert table.loc["flat", S.ZERO_VARIANCE] and table.loc["flat", S.GROUP_KIND] == "unsolved"
    assert table.loc["right", S.ALL_CORRECT] and table.loc["right", S.ZERO_VARIANCE]
    assert table.loc["wrong", S.ALL_WRONG] and table.loc["wrong", S.PASS_RATE] == 0.0
    assert not table.loc["mixed", S.ZERO_VARIANCE] and table.loc["mixed", S.PASS_RATE] == 0.5
    assert not table.loc["alone", S.ZERO_VARIANCE]  # one answer: no variance to speak of
    assert table.loc["alone", S.UNDER_TWO_REWARDS] and table.loc["alone", S.NO_SIGNAL]
    assert table.loc["mixed", S.stat(S.REWARD, "std")] == pytest.approx(0.5)
    expected_spread = 2 * 0.5 / (math.sqrt(1 / 3) + 1e-6)
    assert table.loc["mixed", S.ADVANTAGE_SPREAD] == pytest.approx(expected_spread)
    assert mix(table) == {"groups": 5, S.NO_SIGNAL: 4, S.ZERO_VARIANCE: 3,
                          S.UNDER_TWO_REWARDS: 1, "solved": 2, "unsolved": 2, "mixed": 1}


def test_a_group_is_its_finite_rewards_and_under_two_of_them_give_no_signal(tmp_path):
    # one answer, and two answers of which one reward is NaN or inf: the same case (one
    # finite reward), so the same flags, no std and no advantage; a NaN beside two equal
    # rewards leaves a zero-variance group
    run = _run(tmp_path, _grouped({"alone": [1.0], "nan": [0.2, math.nan],
                                   "inf": [0.4, math.inf], "flat": [0.3, 0.3, math.nan]})
               ).trained()
    found = run.groups().step(1, GroupOptions())
    table = found.table.set_index(S.PROMPT)
    few = ["alone", "nan", "inf"]
    assert table.loc[few, S.GROUP_REWARDED].tolist() == [1, 1, 1]
    assert table.loc[few, S.stat(S.REWARD, "std")].isna().all()  # no std, not 0
    assert table.loc[few, S.UNDER_TWO_REWARDS].all() and table.loc[few, S.NO_SIGNAL].all()
    assert not table.loc[few, S.ZERO_VARIANCE].any()
    assert table.loc["inf", S.stat(S.REWARD, "mean")] == pytest.approx(0.4)
    assert table.loc["flat", S.ZERO_VARIANCE] and not table.loc["flat", S.UNDER_TWO_REWARDS]
    assert table.loc["flat", S.stat(S.REWARD, "std")] == 0.0
    assert found.mix[S.NO_SIGNAL] == 4 and found.mix[S.UNDER_TWO_REWARDS] == 3
    rows = run.groups().rows(1, GroupOptions())
    assert rows.loc[rows[S.PROMPT].isin(few), S.ADVANTAGE].isna().all()
    signals = run.health().signals  # the health page counts the same zero-variance groups
    assert signals.loc[1, S.H_GROUPS] == 1 and signals.loc[1, S.H_ZERO_VARIANCE] == 1.0
    steps, _ = run.groups().history()
    assert steps[S.ZERO_VARIANCE].sum() == 1  # and so does the mix over the run


def test_a_correctness_key_decides_the_pass(tmp_path):
    samples = [make_sample(1, seed=i, prompt="q", reward=0.9, acc=float(i < 1)) for i in range(4)]
    found = _run(tmp_path, samples).trained().groups().step(1, GroupOptions())
    assert found.pass_rule == "acc > 0.5" and found.table[S.PASS_RATE].iloc[0] == 0.25


@pytest.mark.parametrize(("extra", "reason"), [
    ({"status": "Aborted"}, "status=aborted"), ({"status": "failed"}, "status=failed"),
    ({"filtered": True}, "filtered"), ({"is_filtered": "true"}, "is_filtered"),
    ({"finish_reason": "abort"}, "finish_reason=abort"), ({"stop_reason": "aborted"},
                                                           "stop_reason=aborted"),
    ({"error": {"message": "timeout"}}, "error"), ({"remove_sample": 1}, "remove_sample"),
    ({"sample_loss_mask": 0}, "sample_loss_mask=0")])
def test_left_out_samples_are_kept_counted_and_out_of_the_statistics(tmp_path, extra, reason):
    samples = [make_sample(1, seed=0, reward=1.0), make_sample(1, seed=1, reward=0.0),
               make_sample(1, seed=2, reward=100.0, **extra)]
    run = _run(tmp_path, samples)
    assert run.samples[S.EXCLUDED].tolist() == [False, False, True]
    trained = run.trained()
    left_out = trained.left_out.read()
    assert len(trained.samples) == 2 and left_out[S.EXCLUDED_BY].tolist() == [reason]
    assert trained.left_out.size == 1 and trained.left_out.step(1).equals(left_out)
    assert trained.step_stats.loc[1, S.stat(S.REWARD, "mean")] == 0.5
    key = keyed(trained, left_out)[S.KEY].iloc[0]
    assert trained.sample(key).scalars[S.REWARD] == 100.0  # still opens
    found = trained.groups().step(1, GroupOptions())
    assert found.left_out_samples == 1 and found.table[S.GROUP_SIZE].sum() == 2
    shown = trained.groups().step(1, GroupOptions(show_left_out=True))
    assert shown.table[S.GROUP_SIZE].sum() == 3


@pytest.mark.parametrize("extra", [{"status": "completed"}, {"status": "truncated"},
                                   {"finish_reason": "length"}, {"error": None},
                                   {"filtered": False}, {"sample_loss_mask": 1}])
def test_ordinary_statuses_are_trained(tmp_path, extra):
    run = _run(tmp_path, [make_sample(1, **extra)])
    assert not run.samples[S.EXCLUDED].any()


def test_an_unreadable_filter_flag_is_a_problem_not_a_guess(tmp_path):
    run = _run(tmp_path, [make_sample(1, filtered="maybe")])
    assert not run.samples[S.EXCLUDED].any()
    assert any("filtered" in p["reason"] for p in run.problems)


def test_health_counts_the_same_zero_variance_groups_as_the_groups_page(tmp_path):
    # two groups of one prompt text, told apart by uid: the health signal must see two
    samples = [make_sample(1, seed=i, prompt="p", uid="a", reward=1.0) for i in range(3)]
    samples += [make_sample(1, seed=i, prompt="p", uid="b", reward=float(i)) for i in range(3)]
    run = _run(tmp_path, samples).trained()
    mix_ = run.groups().step(1, GroupOptions()).mix
    signals = run.health().signals
    assert signals.loc[1, S.H_GROUPS] == mix_["groups"] == 2
    assert signals.loc[1, S.H_ZERO_VARIANCE] == mix_[S.ZERO_VARIANCE] / mix_["groups"] == 0.5
