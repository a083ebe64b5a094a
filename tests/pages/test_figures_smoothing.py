"""The debiased EMA and the step values every step chart reads."""
import numpy as np
import pandas as pd
import pytest

from loaders import schema as S
from pages.figures.smoothing import (
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









