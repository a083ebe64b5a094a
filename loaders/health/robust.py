"""Robust per-step baselines: a local linear trend of the steps before each step.

Healthy RL runs drift: KL to the reference, response length and reward move steadily. A
flat baseline (the median of the last steps) calls every step of such a drift a spike, so
each step is compared with the Theil–Sen line (median of pairwise slopes) through the
previous `window` steps, extrapolated to the step. The spread is the MAD of the window's
residuals from that line. When a signal is a mean over the step's samples its standard
error is known: the step's own error enters the spread, and the window's typical error is
taken out of the MAD (it is sampling noise, not the process), so a mean of 8 samples must
move much further than a mean of 8,192 before it counts.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.lib.stride_tricks import sliding_window_view

MAD_SCALE = 1.4826  # makes the MAD a consistent estimate of a normal std
CLIP = 2.5
WINSOR_VAR = 0.9773  # E[min(Z², 2.5²)] for a standard normal Z: makes it consistent


@dataclass(frozen=True)
class Baseline:
    """Per step: the trend's prediction, the spread a deviation is measured in, and the
    deviation in spreads (signed; NaN without min_history finite earlier steps)."""
    expected: pd.Series
    spread: pd.Series
    score: pd.Series


def _history(values: np.ndarray, window: int) -> np.ndarray:
    """Row t holds the `window` values before t (NaN-padded at the start)."""
    padded = np.concatenate([np.full(window, np.nan), values[:-1] if values.size else values])
    return sliding_window_view(padded, window)[: values.size]


def _theil_sen(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Slope and intercept (at x = 0) per row, ignoring NaN points."""
    i, j = np.triu_indices(x.shape[1], k=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        slopes = (y[:, j] - y[:, i]) / (x[:, j] - x[:, i])
        slope = _nanmedian(slopes)
        intercept = _nanmedian(y - slope[:, None] * x)
    return slope, intercept


def _noise(hist_y: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """The std of one step's value around the trend, from the window's step-to-step changes
    (MAD of the detrended differences / √2): unlike the residuals of the fitted line it is
    not shrunk by the fit, and a level shift inside the window is one outlier, not many."""
    changes = np.diff(hist_y, axis=1) - slope[:, None]
    centred = changes - _nanmedian(changes)[:, None]
    mad = MAD_SCALE * _nanmedian(np.abs(centred))
    # winsorized at CLIP MADs: as robust to one jump, and steadier than the MAD alone
    clipped = np.clip(centred, -CLIP * mad[:, None], CLIP * mad[:, None])
    with np.errstate(invalid="ignore"):
        return np.sqrt(np.nanmean(clipped ** 2, axis=1) / WINSOR_VAR) / np.sqrt(2)


def _nanmedian(a: np.ndarray) -> np.ndarray:
    """Row medians ignoring NaN (NaN for a row without a finite value): a sort, as
    np.nanmedian is slow on many short rows."""
    ordered = np.sort(a, axis=1)  # NaN sorts last
    count = np.isfinite(a).sum(axis=1)
    rows = np.arange(a.shape[0])
    low = ordered[rows, np.maximum((count - 1) // 2, 0)]
    high = ordered[rows, np.maximum(count // 2, 0) if a.shape[1] else 0]
    return np.where(count > 0, (low + high) / 2, np.nan)


def trend_baseline(values: pd.Series, se: pd.Series | None = None, window: int = 20,
                   min_history: int = 8, rel_floor: float = 0.01) -> Baseline:
    """Each step against the robust linear trend of its previous `window` steps.

    `values` is indexed by step (steps may have gaps: x is the step number). `se` is the
    standard error of each value when it is a mean over samples (NaN or None: unknown).
    The spread is floored at rel_floor·|expected| so a flat history does not turn every
    wobble into an infinite score.
    """
    with warnings.catch_warnings():  # windows of NaN (too little history) stay NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        return _baseline(values, se, window, min_history, rel_floor)


def _baseline(values: pd.Series, se: pd.Series | None, window: int, min_history: int,
              rel_floor: float) -> Baseline:
    y = values.to_numpy(np.float64)
    steps = values.index.to_numpy(np.float64)
    hist_y = _history(y, window)
    hist_x = _history(steps, window) - steps[:, None]  # steps before, relative to the step
    hist_x = np.where(np.isfinite(hist_y), hist_x, np.nan)
    slope, expected = _theil_sen(hist_x, hist_y)
    count = np.isfinite(hist_y).sum(axis=1)
    mad = _noise(hist_y, slope)
    own = np.zeros_like(y) if se is None else np.nan_to_num(se.to_numpy(np.float64))
    typical = np.zeros_like(y) if se is None else np.nan_to_num(
        _nanmedian(_history(se.to_numpy(np.float64), window) ** 2))
    process = np.maximum(mad ** 2 - typical, 0.0)
    # the line itself is estimated from the window: its error at the step (OLS form)
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = np.nanmean(hist_x, axis=1)
        leverage = 1.0 / count + centre ** 2 / np.nansum((hist_x - centre[:, None]) ** 2,
                                                          axis=1)
    spread = np.sqrt(process + own ** 2 + mad ** 2 * np.nan_to_num(leverage, nan=1.0))
    spread = np.maximum(spread, rel_floor * np.abs(expected))
    spread = np.where((spread > 0) & (count >= min_history), spread, np.nan)
    expected = np.where(count >= min_history, expected, np.nan)
    index = values.index
    return Baseline(pd.Series(expected, index), pd.Series(spread, index),
                    pd.Series((y - expected) / spread, index))


def deviation(values: pd.Series, window: int = 20, min_history: int = 8,
              rel_floor: float = 0.01, se: pd.Series | None = None) -> pd.Series:
    """How many spreads each step lies from its own recent trend (signed)."""
    return trend_baseline(values, se, window, min_history, rel_floor).score


def rolling_median(values: pd.Series, window: int, min_history: int) -> pd.Series:
    """The median of the previous `window` values (NaN before min_history)."""
    return values.shift(1).rolling(window, min_periods=min_history).median()
