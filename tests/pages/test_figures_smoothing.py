"""The debiased EMA and the shared curve traces every step chart is drawn with."""
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from loaders import schema as S
from pages.figures.smoothing import (
    RAW_OPACITY,
    add_band,
    add_curve,
    column_values,
    ema,
    first_value,
    has_data,
)


def _closed_form(values: np.ndarray, weight: float) -> np.ndarray:
    """Debiased EMA as an explicit weighted mean of the finite values seen so far."""
    out = np.array(values, dtype=np.float64)
    seen: list[float] = []
    for i, v in enumerate(values):
        if not np.isfinite(v):
            continue
        seen.append(v)
        n = len(seen)
        weights = (1 - weight) * weight ** np.arange(n - 1, -1, -1)
        out[i] = np.dot(weights, seen) / (1 - weight**n)
    return out


def test_hand_computed_example():
    # w=0.5: 1 -> 0.5/0.5 = 1; 2 -> 1.25/0.75 = 5/3; 3 -> 2.125/0.875 = 17/7
    np.testing.assert_allclose(ema(np.array([1.0, 2.0, 3.0]), 0.5), [1.0, 5 / 3, 17 / 7])


@pytest.mark.parametrize("weight", [0.1, 0.6, 0.95])
def test_matches_the_weighted_mean_form(weight):
    values = np.random.default_rng(3).normal(size=200)
    np.testing.assert_allclose(ema(values, weight), _closed_form(values, weight), rtol=1e-12)


def test_nan_stays_in_place_and_does_not_poison_later_points():
    values = np.array([1.0, np.nan, 3.0, np.nan, np.nan, 5.0])
    out = ema(values, 0.5)
    assert np.isnan(out[[1, 3, 4]]).all()
    np.testing.assert_allclose(out[[0, 2, 5]], ema(np.array([1.0, 3.0, 5.0]), 0.5))
    # (0.25 + 1.5) / 0.75 = 7/3 at the second finite value
    assert out[2] == pytest.approx(7 / 3)


def test_leading_nan_and_all_nan():
    out = ema(np.array([np.nan, 2.0, 4.0]), 0.9)
    assert np.isnan(out[0]) and out[1] == pytest.approx(2.0)
    assert np.isnan(ema(np.full(4, np.nan), 0.5)).all()


def test_weight_zero_returns_the_input_unchanged():
    values = np.array([3.0, np.nan, -1.0, 7.5])
    out = ema(values, 0.0)
    np.testing.assert_array_equal(out, values)
    out[0] = 99.0
    assert values[0] == 3.0  # a copy, the caller's array is untouched


def test_debiasing_keeps_a_constant_curve_constant():
    np.testing.assert_allclose(ema(np.full(50, 4.2), 0.99), 4.2)


def test_empty_input_and_bad_weight():
    assert ema(np.array([]), 0.5).size == 0
    for bad in (1.0, -0.1, 1.5):
        with pytest.raises(ValueError):
            ema(np.array([1.0]), bad)


def test_column_values_and_first_value():
    frame = pd.DataFrame({"a": [1, 2, 3]})
    np.testing.assert_array_equal(column_values(frame, "a"), [1.0, 2.0, 3.0])
    assert np.isnan(column_values(frame, "missing")).all()
    assert len(column_values(frame, "missing")) == 3
    assert first_value(np.array([np.nan, 2.0, 5.0])) == 2.0
    assert first_value(np.array([np.nan])) == 0.0


def test_has_data_looks_at_the_step_mean():
    stats = pd.DataFrame({S.stat(S.REWARD, "mean"): [np.nan, 1.0],
                          S.stat("other", "mean"): [np.nan, np.nan]})
    assert has_data(stats, S.REWARD)
    assert not has_data(stats, "other") and not has_data(stats, "absent")


def test_add_curve_keeps_the_raw_curve_faint_under_the_ema():
    x, y = np.arange(5), np.array([1.0, 3.0, 2.0, 5.0, 4.0])
    fig = go.Figure()
    add_curve(fig, x, y, name="m", color="#000000", smoothing=0.6, offset=1.0)
    raw, smooth = fig.data
    assert isinstance(raw, go.Scatter) and isinstance(smooth, go.Scatter)
    assert raw.opacity == RAW_OPACITY and raw.showlegend is False
    np.testing.assert_allclose(raw.y, y - 1.0)
    np.testing.assert_allclose(smooth.y, _closed_form(y - 1.0, 0.6))


def test_add_curve_without_smoothing_is_one_trace():
    fig = go.Figure()
    add_curve(fig, np.arange(3), np.array([1.0, 2.0, 3.0]), name="<b>m</b>", color="#000000")
    assert len(fig.data) == 1
    assert "<b>" not in fig.data[0].hovertemplate  # names are escaped in hover


def test_add_band_is_one_polygon_without_nan_steps():
    x = np.arange(4)
    mean, std = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.5, np.nan, 1.0, 0.0])
    fig = go.Figure()
    add_band(fig, x, mean, std, k=2.0, name="band", color="#000000")
    (band,) = fig.data
    assert band.fill == "toself"
    np.testing.assert_array_equal(band.x, [0, 2, 3, 3, 2, 0])
    np.testing.assert_allclose(band.y, [2.0, 5.0, 4.0, 4.0, 1.0, 0.0])


def test_add_band_with_nothing_finite_adds_nothing():
    fig = go.Figure()
    add_band(fig, np.arange(2), np.array([1.0, 2.0]), np.full(2, np.nan), k=1.0, name="b",
             color="#000000")
    assert not fig.data


def test_a_long_run_s_curve_is_a_line_without_a_marker_per_step():
    """A marker is an SVG node: 1,000 steps x six curves was 6,000 nodes on one chart."""
    for steps, mode in ((50, "lines+markers"), (1000, "lines")):
        fig = go.Figure()
        x = np.arange(steps)
        add_curve(fig, x, np.sin(x), name="reward", color="#000", smoothing=0.5)
        assert [t.mode for t in fig.data] == ["lines", mode]
