"""The smoothing and the step values every step chart shares, so all pages smooth alike."""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S

RAW_OPACITY = 0.3  # the unsmoothed curve under an EMA stays visible but quiet
BAND_OPACITY = 0.2


def ema(values: np.ndarray, weight: float) -> np.ndarray:
    """TensorBoard's debiased exponential moving average.

    Debiasing (dividing by 1 - weight**n) keeps the first points at the data's level instead
    of dragging them towards 0, so a smoothed curve starts where the raw curve starts.
    Non-finite inputs stay as they are at their own position and are skipped by the average,
    so one NaN step does not blank the rest of the curve.
    """
    if not 0.0 <= weight < 1.0:
        raise ValueError(f"smoothing weight must be in [0, 1), got {weight}")
    data = np.asarray(values, dtype=np.float64)
    if weight == 0.0:
        return data.copy()
    out = data.copy()
    last, count = 0.0, 0
    for i, value in enumerate(data):
        if not np.isfinite(value):
            continue
        last = last * weight + (1.0 - weight) * value
        count += 1
        out[i] = last / (1.0 - weight**count)
    return out


def column_values(frame: pd.DataFrame, column: str) -> np.ndarray:
    """A column as float64 numpy; all NaN when absent, so dumps without refs still draw."""
    if column not in frame:
        return np.full(len(frame), np.nan)
    return frame[column].to_numpy(dtype=np.float64, na_value=np.nan)


def has_data(stats: pd.DataFrame, column: str) -> bool:
    """Whether the per-step mean of a column has any finite value (optional keys often don't)."""
    return bool(np.isfinite(column_values(stats, S.stat(column, "mean"))).any())


def first_value(values: np.ndarray) -> float:
    """The first finite value: the origin of a zero-shifted curve (0 when there is none)."""
    finite = values[np.isfinite(values)]
    return float(finite[0]) if finite.size else 0.0
