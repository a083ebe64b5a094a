"""loaders.index.steps: per-step aggregates of the summary frame, checked against plain numpy."""
import numpy as np
import pandas as pd
import pytest

from loaders import schema as S
from loaders.index import table as frame
from loaders.index.steps import step_stats

NAN = float("nan")
# step -> rewards / ref rewards of its samples (NaN = not written)
REWARDS = {0: [0.5, 1.0, -0.25, 2.0], 3: [0.1, 0.1, 0.9], 7: [1.5]}
REF_REWARDS = {0: [0.25, 1.0, NAN, 0.0], 3: [0.2, 0.0, 0.95], 7: [NAN]}
LENGTHS = {0: [4, 9, 2, 9], 3: [1, 2, 3], 7: [5]}


@pytest.fixture
def samples():
    rows = []
    for step, rewards in REWARDS.items():
        for i, reward in enumerate(rewards):
            rows.append({S.FILE: "rollout_data_rank_0.jsonl", S.LINE: len(rows) + 1,
                         S.RANK: 0, S.STEP: step, S.REWARD: reward,
                         S.REF_REWARD: REF_REWARDS[step][i],
                         S.REWARD_GAP: reward - REF_REWARDS[step][i],
                         S.RESPONSE_LEN: LENGTHS[step][i], S.NAN_COUNT: i % 2})
    return frame.combine([pd.DataFrame(rows)])


def test_one_row_per_step_with_sample_counts(samples):
    stats = step_stats(samples)
    assert stats.index.tolist() == [0, 3, 7]
    assert stats[S.SAMPLES].tolist() == [4, 3, 1]


@pytest.mark.parametrize("step", sorted(REWARDS))
def test_reward_stats_match_numpy(samples, step):
    row = step_stats(samples).loc[step]
    rewards = np.array(REWARDS[step])
    assert row[S.stat(S.REWARD, "mean")] == pytest.approx(rewards.mean())
    assert row[S.stat(S.REWARD, "std")] == pytest.approx(rewards.std(ddof=0))
    assert row[S.stat(S.REWARD, "min")] == rewards.min()
    assert row[S.stat(S.REWARD, "max")] == rewards.max()
    assert row[S.stat(S.REWARD, "p50")] == pytest.approx(np.median(rewards))
    assert row[S.stat(S.REWARD, "p10")] == pytest.approx(np.quantile(rewards, 0.1))
    assert row[S.stat(S.REWARD, "p90")] == pytest.approx(np.quantile(rewards, 0.9))


def test_std_is_population_std(samples):
    # step 0: ddof=0 and ddof=1 differ, so this pins the choice
    rewards = np.array(REWARDS[0])
    got = step_stats(samples).loc[0, S.stat(S.REWARD, "std")]
    assert got == pytest.approx(np.sqrt(((rewards - rewards.mean()) ** 2).mean()))
    assert got != pytest.approx(rewards.std(ddof=1))


def test_single_sample_step_has_zero_std(samples):
    assert step_stats(samples).loc[7, S.stat(S.REWARD, "std")] == 0.0


def test_reward_gap_stats_skip_nan_gaps(samples):
    gaps = np.array(REWARDS[0]) - np.array(REF_REWARDS[0])
    got = step_stats(samples).loc[0, S.stat(S.REWARD_GAP, "mean")]
    assert got == pytest.approx(np.nanmean(gaps))


def test_ref_reward_stats_skip_missing(samples):
    got = step_stats(samples).loc[0, S.stat(S.REF_REWARD, "mean")]
    assert got == pytest.approx(np.nanmean(REF_REWARDS[0]))


def test_win_rate_counts_only_rows_with_both_rewards(samples):
    stats = step_stats(samples)
    for step in (0, 3):
        r, ref = np.array(REWARDS[step]), np.array(REF_REWARDS[step])
        both = ~np.isnan(r) & ~np.isnan(ref)
        wins, losses = (r[both] > ref[both]).sum(), (r[both] < ref[both]).sum()
        assert stats.loc[step, S.WIN_RATE] == pytest.approx(wins / (wins + losses)), step
    # by hand: step 0 has 3 comparable rows, 0.5>0.25 and 2.0>0.0 win, 1.0 == 1.0 ties:
    # the tie counts for neither side, so RL won every decided pair
    assert stats.loc[0, S.WIN_RATE] == pytest.approx(1.0)
    assert stats.loc[0, S.TIE_SHARE] == pytest.approx(1 / 3)
    assert stats.loc[0, S.WIN_SHARE] == pytest.approx(2 / 3)
    assert stats.loc[0, S.LOSS_SHARE] == 0
    assert stats.loc[3, S.WIN_RATE] == pytest.approx(1 / 3)


def test_win_rate_is_nan_when_no_row_has_both(samples):
    assert np.isnan(step_stats(samples).loc[7, S.WIN_RATE])


def test_response_len_stats_and_truncated_share(samples):
    stats = step_stats(samples)
    assert stats.loc[0, S.stat(S.RESPONSE_LEN, "max")] == 9
    assert stats.loc[3, S.stat(S.RESPONSE_LEN, "mean")] == pytest.approx(2.0)
    # the run's max length 9 is reached by two samples of step 0: those are truncated
    assert stats.loc[0, "truncated_share"] == pytest.approx(0.5)
    assert stats.loc[3, "truncated_share"] == 0.0


def test_nan_count_is_summed_and_nonfinite_share(samples):
    stats = step_stats(samples)
    # nan_count is i % 2 per sample: step 0 -> 0,1,0,1; step 3 -> 0,1,0; step 7 -> 0
    assert stats[S.NAN_COUNT].tolist() == [2, 1, 0]
    assert stats["nonfinite_share"].tolist() == pytest.approx([0.5, 1 / 3, 0.0])


def test_every_aggregate_column_is_present(samples):
    stats = step_stats(samples)
    for column in (S.REWARD, S.LOG_RATIO_MEAN, S.kl_sum(S.K3), S.VALUE_MEAN):
        for suffix in S.STAT_SUFFIXES:
            assert S.stat(column, suffix) in stats.columns
    for flag in S.FLAGS:
        assert f"{flag}_share" in stats.columns


def test_empty_frame_gives_empty_stats():
    stats = step_stats(frame.empty_frame())
    assert stats.empty and stats.index.name == S.STEP


def test_an_infinite_reward_leaves_its_step_on_the_curve(samples):
    """A step's stats are of its finite values: one reward of inf made the mean inf and the
    std NaN, and the curve (and its band) lost the step."""
    samples = samples.copy()  # the frame's columns are Arrow's, read-only
    samples.loc[samples[S.STEP] == 3, S.REWARD] = [0.1, np.inf, 0.9]
    row = step_stats(samples).loc[3]
    assert row[S.stat(S.REWARD, "mean")] == pytest.approx(0.5)
    assert row[S.stat(S.REWARD, "std")] == pytest.approx(0.4)
    assert row[S.stat(S.REWARD, "max")] == 0.9 and row[S.SAMPLES] == 3
