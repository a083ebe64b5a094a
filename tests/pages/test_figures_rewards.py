"""Rewards page builders: step curves, bands, smoothing, zero-shift and one step's bars."""

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from pages.figures import distributions as D
from pages.figures import rewards as R

MEAN, STD = "mean", "std"


def _stats(means: dict, stds: dict | None = None, steps=None, samples: int = 8) -> pd.DataFrame:
    """A step_stats-shaped frame: one mean (and optional std) column per metric."""
    n = len(next(iter(means.values())))
    index = pd.Index(steps if steps is not None else range(n), name=S.STEP)
    columns = {S.stat(c, MEAN): v for c, v in means.items()}
    columns |= {S.stat(c, STD): v for c, v in (stds or {}).items()}
    columns[S.SAMPLES] = [samples] * n
    return pd.DataFrame(columns, index=index, dtype=np.float64)


def _named(fig: go.Figure, name: str):
    matches = [t for t in fig.data if t.name == name]
    assert len(matches) == 1, [t.name for t in fig.data]
    return matches[0]


def _band(fig: go.Figure):
    bands = [t for t in fig.data if t.fill == "toself"]
    assert len(bands) == 1
    return bands[0]


REWARDS = [0.1, 0.4, 0.3, 0.8]
SPREAD = [0.2, 0.1, 0.0, 0.4]


def test_step_curve_mean_and_band():
    stats = _stats({S.REWARD: REWARDS}, {S.REWARD: SPREAD}, steps=[10, 20, 30, 40])
    fig = R.step_curve(stats, S.REWARD, band_k=1.5)
    assert all(isinstance(t, go.Scatter) for t in fig.data) and len(fig.data) == 2
    mean = _named(fig, f"{S.REWARD} mean")
    np.testing.assert_array_equal(mean.x, [10, 20, 30, 40])
    np.testing.assert_allclose(mean.y, REWARDS)
    band = _band(fig)
    expected_upper = np.array(REWARDS) + 1.5 * np.array(SPREAD)
    expected_lower = np.array(REWARDS) - 1.5 * np.array(SPREAD)
    np.testing.assert_allclose(band.y, np.concatenate([expected_upper, expected_lower[::-1]]))
    np.testing.assert_array_equal(band.x, [10, 20, 30, 40, 40, 30, 20, 10])
    assert "± 1.5·std" in fig.layout.title.text and "8 samples per step" in fig.layout.title.text


def test_band_width_scales_with_k():
    stats = _stats({S.REWARD: REWARDS}, {S.REWARD: SPREAD})
    half = {}
    for k in (1.0, 2.5):
        band = _band(R.step_curve(stats, S.REWARD, band_k=k))
        half[k] = np.asarray(band.y[:4]) - np.array(REWARDS)
    np.testing.assert_allclose(half[2.5], 2.5 * half[1.0])
    np.testing.assert_allclose(half[1.0], SPREAD)


def test_band_k_zero_hides_the_band():
    stats = _stats({S.REWARD: REWARDS}, {S.REWARD: SPREAD})
    fig = R.step_curve(stats, S.REWARD, band_k=0)
    assert [t.name for t in fig.data] == [f"{S.REWARD} mean"]
    assert "std" not in fig.layout.title.text


def test_smoothing_keeps_the_raw_curve_faint():
    stats = _stats({S.REWARD: REWARDS}, {S.REWARD: SPREAD})
    fig = R.step_curve(stats, S.REWARD, band_k=0, smoothing=0.5)
    raw, smooth = _named(fig, f"{S.REWARD} mean (raw)"), _named(fig, f"{S.REWARD} mean")
    assert raw.opacity == pytest.approx(0.3)
    np.testing.assert_allclose(raw.y, REWARDS)
    # hand-rolled debiased EMA
    last, expected = 0.0, []
    for i, v in enumerate(REWARDS, start=1):
        last = 0.5 * last + 0.5 * v
        expected.append(last / (1 - 0.5**i))
    np.testing.assert_allclose(smooth.y, expected)
    assert "EMA 0.5" in fig.layout.title.text


def test_zero_shift_starts_every_curve_at_zero():
    stats = _stats({S.REWARD: REWARDS, S.REF_REWARD: [0.5, 0.6, 0.7, 0.9]},
                   {S.REWARD: SPREAD})
    fig = R.step_curve(stats, S.REWARD, band_k=1.0, zero_shift=True, ref_column=S.REF_REWARD)
    rl, ref = _named(fig, f"{S.REWARD} mean"), _named(fig, f"{S.REF_REWARD} mean")
    np.testing.assert_allclose(rl.y, np.array(REWARDS) - 0.1)
    np.testing.assert_allclose(ref.y, [0.0, 0.1, 0.2, 0.4], atol=1e-12)
    band = _band(fig)
    assert band.y[0] == pytest.approx(SPREAD[0]) and band.y[-1] == pytest.approx(-SPREAD[0])
    assert ref.line.dash == "dash"


def test_zero_shift_with_smoothing_still_starts_at_zero():
    stats = _stats({S.REWARD: [np.nan, 2.0, 3.0, 1.0]}, {S.REWARD: [0.1] * 4})
    fig = R.step_curve(stats, S.REWARD, smoothing=0.9, zero_shift=True)
    smooth = np.asarray(_named(fig, f"{S.REWARD} mean").y)
    assert np.isnan(smooth[0]) and smooth[1] == pytest.approx(0.0)


def test_ref_column_without_data_is_left_out():
    stats = _stats({S.REWARD: REWARDS, S.REF_REWARD: [np.nan] * 4})
    fig = R.step_curve(stats, S.REWARD, ref_column=S.REF_REWARD)
    assert f"{S.REF_REWARD} mean" not in [t.name for t in fig.data]
    fig = R.step_curve(stats, S.REWARD, ref_column="not_a_column")
    assert len(fig.data) == 1  # no std column either: no band


def test_one_step_and_nan_std():
    one = _stats({S.REWARD: [0.7]}, {S.REWARD: [0.2]}, steps=[5])
    fig = R.step_curve(one, S.REWARD, smoothing=0.8, zero_shift=True)
    np.testing.assert_allclose(_named(fig, f"{S.REWARD} mean").y, [0.0])
    band = _band(fig)
    np.testing.assert_allclose(band.y, [0.2, -0.2])
    assert band.line.width > 0  # a single step has no area: the band is drawn as a bar
    nan_std = _stats({S.REWARD: REWARDS}, {S.REWARD: [0.1, np.nan, 0.1, 0.1]})
    fig = R.step_curve(nan_std, S.REWARD)
    np.testing.assert_array_equal(_band(fig).x, [0, 2, 3, 3, 2, 0])
    assert len(_named(fig, f"{S.REWARD} mean").y) == 4
    assert not any(t.fill for t in R.step_curve(_stats({S.REWARD: [1.0]}, {S.REWARD: [np.nan]}),
                                                S.REWARD).data)


def test_reward_curves_adds_valid_rewards_only_with_data():
    stats = _stats({S.REWARD: REWARDS, S.REF_REWARD: [0.5] * 4,
                    S.VALID_REWARD: [np.nan] * 4, S.REF_VALID_REWARD: [np.nan] * 4},
                   {S.REWARD: SPREAD})
    names = [t.name for t in R.reward_curves(stats, band_k=1, smoothing=0, zero_shift=False).data]
    assert names == [f"{S.REWARD} ± 1·std", f"{S.REWARD} mean", f"{S.REF_REWARD} mean"]
    stats[S.stat(S.VALID_REWARD, MEAN)] = [0.2, 0.3, 0.4, 0.5]
    stats[S.stat(S.REF_VALID_REWARD, MEAN)] = [0.1, np.nan, 0.1, 0.1]
    fig = R.reward_curves(stats, band_k=1, smoothing=0, zero_shift=True)
    np.testing.assert_allclose(_named(fig, f"{S.VALID_REWARD} mean").y, [0.0, 0.1, 0.2, 0.3])
    ref_valid = np.asarray(_named(fig, f"{S.REF_VALID_REWARD} mean").y)
    assert np.isnan(ref_valid[1]) and ref_valid[3] == 0.0
    assert all(isinstance(t, go.Scatter) for t in fig.data)


def test_win_rate_curve():
    stats = _stats({S.REWARD: REWARDS})
    stats[S.WIN_RATE] = [0.25, 0.5, np.nan, 1.0]
    fig = R.win_rate_curve(stats)
    (trace,) = fig.data  # no tie or loss shares in these stats: only the win rate
    assert isinstance(trace, go.Scatter)  # a short curve is SVG
    np.testing.assert_array_equal(trace.y, [0.25, 0.5, np.nan, 1.0])
    assert fig.layout.yaxis.tickformat == ".0%"
    assert [s.y0 for s in fig.layout.shapes] == [0.5]
    assert "wins / (wins + losses)" in fig.layout.title.text
    assert len(R.win_rate_curve(stats, smoothing=0.5).data) == 2
    stats[S.TIE_SHARE] = [0.5, 0.2, np.nan, 0.0]
    stats[S.LOSS_SHARE] = [0.3, 0.4, np.nan, 0.0]
    names = [t.name for t in R.win_rate_curve(stats).data]
    assert names == ["win rate (ties excluded)", "tie share", "loss share"]


def test_reward_histogram_shares_bin_edges():
    rng = np.random.default_rng(0)
    reward = rng.normal(size=200)
    ref = rng.normal(1.0, 0.5, size=200)
    reward[:5] = np.nan
    rows = pd.DataFrame({S.REWARD: reward, S.REF_REWARD: ref})
    fig = R.reward_histogram(rows, bins=12)
    rl, rf = fig.data
    assert isinstance(rl, go.Bar) and isinstance(rf, go.Bar)
    edges = np.linspace(min(np.nanmin(reward), ref.min()), max(np.nanmax(reward), ref.max()), 13)
    np.testing.assert_allclose(rl.x, (edges[:-1] + edges[1:]) / 2)
    np.testing.assert_allclose(rf.x, rl.x)
    np.testing.assert_array_equal(rl.y, np.histogram(reward[5:], bins=edges)[0])
    np.testing.assert_array_equal(rf.y, np.histogram(ref, bins=edges)[0])
    assert sum(rl.y) == 195 and sum(rf.y) == 200
    assert "12 bins" in fig.layout.title.text and fig.layout.barmode == "overlay"
    assert rl.opacity < 1


def test_reward_histogram_edge_cases():
    assert not R.reward_histogram(pd.DataFrame({S.REWARD: [np.nan], S.REF_REWARD: [np.nan]})).data
    fig = R.reward_histogram(pd.DataFrame({S.REWARD: [1.0, 1.0], S.REF_REWARD: [np.nan] * 2}))
    (only,) = fig.data
    assert sum(only.y) == 2


@pytest.mark.parametrize(("points", "expected"), [
    ([], None), (None, None), ([{"x": 3.6, "y": 1.0}], 4), ([{"x": 7}, {"x": 2}], 7),
    ([{"y": 1.0}], None), ([{"x": float("nan")}], None)])
def test_selected_step(points, expected):
    assert R.selected_step(points) == expected


def test_curves_from_a_real_dump(tmp_path):
    samples = [make_sample(step, seed=i) for step in range(4) for i in range(5)]
    run = open_run(write_dump(tmp_path / "run" / "rollout.jsonl", samples).parent)
    fig = R.reward_curves(run.step_stats, band_k=2.0, smoothing=0.0, zero_shift=False)
    by_step = pd.DataFrame(samples).groupby(S.STEP)[S.REWARD]
    np.testing.assert_allclose(_named(fig, f"{S.REWARD} mean").y, by_step.mean())
    upper = np.asarray(_band(fig).y[:4])
    np.testing.assert_allclose(upper, by_step.mean() + 2 * by_step.std(ddof=0))
    np.testing.assert_allclose(_named(fig, f"{S.REF_REWARD} mean").y, [0.25] * 4)
    assert "5 samples per step" in fig.layout.title.text
    ecdf = D.reward_ecdf(run.step_rows(2))
    np.testing.assert_allclose(ecdf.data[0].x, sorted(s[S.REWARD] for s in samples[10:15]))
