"""Robust per-step baselines: a rolling median and MAD of the steps before each step."""
from __future__ import annotations

import numpy as np
import pandas as pd

MAD_SCALE = 1.4826  # makes the MAD a consistent estimate of a normal std


def baseline(values: pd.Series, window: int, min_history: int) -> tuple[pd.Series, pd.Series]:
    """(median, scaled MAD) of the previous `window` finite values, NaN before min_history."""
    prior = values.shift(1).rolling(window, min_periods=min_history)
    return prior.median(), prior.apply(_mad, raw=True) * MAD_SCALE


def rolling_median(values: pd.Series, window: int, min_history: int) -> pd.Series:
    """Just the median of baseline(): what evidence quotes, without the costlier MAD."""
    return values.shift(1).rolling(window, min_periods=min_history).median()


def _mad(window: np.ndarray) -> float:
    """Median absolute deviation from the median of the same window."""
    finite = window[np.isfinite(window)]
    return float(np.median(np.abs(finite - np.median(finite)))) if finite.size else np.nan


def deviation(values: pd.Series, window: int = 20, min_history: int = 5,
              rel_floor: float = 0.05) -> pd.Series:
    """How many robust stds each step lies from its own recent past (signed).

    The spread is floored at rel_floor·|median| so a flat history does not turn every
    wobble into an infinite score.
    """
    median, mad = baseline(values, window, min_history)
    spread = np.maximum(mad, rel_floor * median.abs())
    spread = spread.where(spread > 0)
    return (values - median) / spread
