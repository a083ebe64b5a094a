"""The Responses page's range sliders: their bounds, and a range kept inside them.

A bar clicked on the Rewards page opens Responses with that bar's range; a bar's edges may
pass the step's values, and a slider's link names only values the slider takes (Streamlit
drops one outside its bounds), so the jump clamps the range before it puts it in the URL,
with the same bounds the Responses page then draws."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

Range = tuple[float, float]


def reward_bounds(reward: pd.Series) -> Range | None:
    """The Reward range slider's bounds: the step's finite rewards, widened to the 0.01 the
    slider moves by; None when they do not differ (no slider is drawn)."""
    values = reward.to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    if not len(finite) or finite.min() == finite.max():
        return None
    return (math.floor(finite.min() * 100) / 100, math.ceil(finite.max() * 100) / 100)


def column_bounds(column: pd.Series) -> Range | None:
    """A column range slider's bounds (the column's values, NaN aside); None when they do not
    differ or there are none (no slider is drawn)."""
    values = column.astype(float)
    low, high = float(values.min()), float(values.max())
    return None if not low < high else (low, high)


def clamped(asked: Range, bounds: Range) -> Range:
    """`asked` kept inside `bounds`, each end on its side."""
    low, high = bounds
    return (min(max(float(asked[0]), low), high), max(min(float(asked[1]), high), low))


def followed(asked: Range, before: Range, bounds: Range) -> Range:
    """A range a slider of `before` showed, moved to a slider of `bounds` (another step's
    values): an end left at its old bound goes to the new one, so a slider nobody narrowed
    filters nothing at any step; a narrowed end stays where it was, kept inside `bounds`."""
    low, high = float(asked[0]), float(asked[1])
    return clamped((bounds[0] if low <= before[0] else low,
                    bounds[1] if high >= before[1] else high), bounds)


def opened(chosen: Range, bounds: Range) -> Range | None:
    """A slider's range as a filter: None when it is the whole slider (every sample kept, a
    non-finite or missing value too); else each end at its bound opened to infinity, since
    the bounds are the finite values' (a reward of inf stays in a range up to the top)."""
    low, high = float(chosen[0]), float(chosen[1])
    if low <= bounds[0] and high >= bounds[1]:
        return None
    return (-math.inf if low <= bounds[0] else low, math.inf if high >= bounds[1] else high)
