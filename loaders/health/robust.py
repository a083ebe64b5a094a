"""Robust per-step baselines: a local linear trend of the steps before each step.

Healthy RL runs drift: KL to the reference, response length and reward move steadily. A
flat baseline (the median of the last steps) calls every step of such a drift a spike, so
each step is compared with the Theil–Sen line (median of pairwise slopes) through the
previous `window` steps, extrapolated to the step, leaving out earlier steps that were
outliers themselves. The spread comes from the window's detrended step-to-step changes.
When a signal is a mean over the step's samples its standard error is known: the step's
own sampling error enters the spread, and the window's typical one is taken out of the
history's noise (it is sampling, not the process), so a mean of 8 samples must move much
further than a mean of 8,192 before it counts.
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
# a step this many spreads off its trend is left out of the later steps' history: a fault
# must not bend the trend it is measured against (nor, once over, make recovery a spike)
OUTLIER = 5.0


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
        return np.sqrt(_row_means(clipped ** 2) / WINSOR_VAR) / np.sqrt(2)


def _row_means(a: np.ndarray) -> np.ndarray:
    """np.nanmean by row, the same sums and division, NaN for a row without a value, and no
    "Mean of empty slice" warning (a short window has such rows; the warning, raised from
    the thread that warms the health signals, is no error)."""
    count = np.sum(~np.isnan(a), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.nansum(a, axis=1) / count


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
                   min_history: int = 8, rel_floor: float = 0.01,
                   n: pd.Series | None = None) -> Baseline:
    """Each step against the robust linear trend of its previous `window` steps.

    `values` is indexed by step (steps may have gaps: x is the step number). `se` is the
    standard error of each value when it is a mean over samples (NaN or None: unknown),
    `n` the samples behind it.
    The spread is floored at rel_floor·|expected| so a flat history does not turn every
    wobble into an infinite score.
    """
    with warnings.catch_warnings():  # windows of NaN (too little history) stay NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        return _baseline(values, se, window, min_history, rel_floor, n)


def _sampling(se: pd.Series | None, n: pd.Series | None, window: int, size: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """(the step's own sampling variance, the window's typical one). With the steps' n,
    the step's is the window's typical per-sample variance over its n: what the step
    would show if nothing changed (a fault that also widens the spread of its own samples
    does not widen its own yardstick)."""
    if se is None:
        return np.zeros(size), np.zeros(size)
    var = se.to_numpy(np.float64) ** 2
    typical = np.nan_to_num(_nanmedian(_history(var, window)))
    if n is None:
        return np.nan_to_num(var), typical
    counts = n.to_numpy(np.float64)
    per_sample = _nanmedian(_history(var * counts, window))
    own = np.where(np.isfinite(per_sample) & (counts > 0), per_sample / counts, var)
    return np.nan_to_num(own), typical


def _baseline(values: pd.Series, se: pd.Series | None, window: int, min_history: int,
              rel_floor: float, n: pd.Series | None = None) -> Baseline:
    y = values.to_numpy(np.float64)
    steps = values.index.to_numpy(np.float64)
    own, typical = _sampling(se, n, window, y.size)
    fit = _Fit(_history(steps, window) - steps[:, None], own, typical, min_history, rel_floor)
    expected, spread = fit.rows(_history(y, window), slice(None))
    z = (y - expected) / spread
    clean = y.copy()
    for t in range(y.size):  # an outlier leaves the history of the steps after it
        if abs(z[t]) >= OUTLIER and np.isfinite(z[t]):
            clean[t] = np.nan
            later = slice(t + 1, min(t + 1 + window, y.size))
            expected[later], spread[later] = fit.rows(_history(clean, window)[later], later)
            z[later] = (y[later] - expected[later]) / spread[later]
    index = values.index
    return Baseline(pd.Series(expected, index), pd.Series(spread, index), pd.Series(z, index))


class _Fit:
    """The trend and spread of rows of history (steps relative to each row's step)."""

    def __init__(self, hist_x: np.ndarray, own: np.ndarray, typical: np.ndarray,
                 min_history: int, rel_floor: float) -> None:
        self.hist_x, self.own, self.typical = hist_x, own, typical
        self.min_history, self.rel_floor = min_history, rel_floor

    def rows(self, hist_y: np.ndarray, at: slice) -> tuple[np.ndarray, np.ndarray]:
        hist_x = np.where(np.isfinite(hist_y), self.hist_x[at], np.nan)
        slope, expected = _theil_sen(hist_x, hist_y)
        count = np.isfinite(hist_y).sum(axis=1)
        mad = _noise(hist_y, slope)
        process = np.maximum(mad ** 2 - self.typical[at], 0.0)
        # the line itself is estimated from the window: its error at the step (OLS form)
        with np.errstate(invalid="ignore", divide="ignore"):
            centre = _row_means(hist_x)
            leverage = 1.0 / count + centre ** 2 / np.nansum(
                (hist_x - centre[:, None]) ** 2, axis=1)
        # a spread from few steps is itself uncertain: widen it as a t quantile would
        small = 1.0 + 2.0 / np.maximum(count - 2, 1)
        spread = small * np.sqrt(process + self.own[at]
                                 + mad ** 2 * np.nan_to_num(leverage, nan=1.0))
        spread = np.maximum(spread, self.rel_floor * np.abs(expected))
        enough = count >= self.min_history
        return np.where(enough, expected, np.nan), np.where(enough & (spread > 0), spread,
                                                             np.nan)


def deviation(values: pd.Series, window: int = 20, min_history: int = 8,
              rel_floor: float = 0.01, se: pd.Series | None = None) -> pd.Series:
    """How many spreads each step lies from its own recent trend (signed)."""
    return trend_baseline(values, se, window, min_history, rel_floor).score


def rolling_median(values: pd.Series, window: int, min_history: int) -> pd.Series:
    """The median of the previous `window` values (NaN before min_history)."""
    return values.shift(1).rolling(window, min_periods=min_history).median()
