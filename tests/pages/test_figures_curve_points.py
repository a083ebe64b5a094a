"""A long step curve is drawn from each bin's lowest and highest step: its shape, every spike
and every gap kept, and only real steps with their own values."""
from __future__ import annotations

import numpy as np

from pages.figures import step_panels
from pages.figures.curve_points import MAX_POINTS, kept_points
from pages.figures.step_panels import Curve, Marks, panel


def test_a_short_curve_keeps_every_point():
    assert kept_points([np.arange(MAX_POINTS, dtype=float)]).tolist() == list(range(MAX_POINTS))
    assert kept_points([]).tolist() == []


def test_a_long_curve_keeps_each_bins_extremes_and_both_ends():
    rng = np.random.default_rng(0)
    values = rng.normal(size=5_000)
    kept = kept_points([values], max_points=100)
    assert kept[0] == 0 and kept[-1] == 4_999
    assert len(kept) <= 102
    edges = np.linspace(0, 5_000, 51).round().astype(int)
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = kept[(kept >= lo) & (kept < hi)]
        assert lo + values[lo:hi].argmin() in inside and lo + values[lo:hi].argmax() in inside


def test_a_one_step_spike_stays_at_its_height():
    values = np.zeros(10_000)
    values[7_777] = 50.0
    values[1_234] = -3.0
    kept = kept_points([values])
    assert 7_777 in kept and 1_234 in kept
    assert values[kept].max() == 50.0 and values[kept].min() == -3.0


def test_a_gap_stays_a_gap_and_an_all_nan_curve_draws_nothing_between_its_ends():
    values = np.arange(3_000, dtype=float)
    values[1_000:1_500] = np.nan
    kept = kept_points([values])
    assert 1_000 in kept  # the line breaks here
    assert np.isfinite(values[kept]).sum() == len(kept) - 1
    assert kept_points([np.full(3_000, np.nan)]).tolist() == [0, 2_999]


def test_every_column_keeps_its_own_extremes():
    first, second = np.zeros(2_000), np.zeros(2_000)
    first[10], second[1_990] = 1.0, -1.0
    kept = kept_points([first, second])
    assert 10 in kept and 1_990 in kept


def test_a_long_panel_draws_real_steps_with_their_values_and_its_band():
    steps = np.arange(100, 100 + 3_000)
    reward = np.sin(steps / 50.0)
    reward[2_500] = 9.0
    band = (reward - 1.0, reward + 1.0)
    band[1][42] = 20.0  # the band's own spike
    data = panel(steps, [Curve("reward", reward, "#000"), Curve("ref", -reward, "#111")],
                 title="t", y_title="y", marks=Marks(band=band)).data
    first = data[data[step_panels.SERIES] == "reward"]
    assert 0 < len(first) <= MAX_POINTS + 4
    positions = first[step_panels.STEP].to_numpy() - 100
    assert np.array_equal(first[step_panels.VALUE].to_numpy(), reward[positions])
    assert np.array_equal(first[step_panels.HIGH].to_numpy(), band[1][positions])
    assert {2_600, 142} <= set(first[step_panels.STEP]) and first[step_panels.VALUE].max() == 9
    second = data[data[step_panels.SERIES] == "ref"]
    assert second[step_panels.VALUE].min() == -9 and second[step_panels.LOW].isna().all()


def test_a_smoothed_panel_keeps_the_raw_curves_spikes_too():
    raw = np.zeros(4_000)
    raw[3_333] = 100.0
    data = panel(np.arange(4_000), [Curve("kl", raw, "#000")], title="t", y_title="y",
                 smoothing=0.99).data
    assert data[step_panels.RAW].max() == 100.0
    assert data[step_panels.VALUE].max() > 0  # the EMA's peak, at its own step
