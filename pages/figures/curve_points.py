"""The points of a long step curve that keep its shape: each bin's lowest and highest.

A chart of a 1,000-step run has about one pixel a step, and Vega pays for every point it is
given (in a fresh browser, three panels of two 1,000-step curves take 0.6 s longer to draw
than the same panels at 400 points; docs/benchmarks.md).  Past MAX_POINTS steps a curve keeps,
of each of MAX_POINTS / 2 runs of steps, the step of its lowest and of its highest value: a
spike of one step stays drawn at its true height, as a min-max envelope would draw it, and
every point drawn is a real step with its own value (no mean of steps, no made-up x).
"""
from __future__ import annotations

import numpy as np

MAX_POINTS = 400  # a curve's points at most (plus the starts of gaps and both ends)
# few points get dots, so an isolated value stays visible; past this many a dot a point is
# a mark each for nothing the line does not show (1,000 steps x 6 curves: 6,000 marks)
MARKERS_UP_TO = 300


def kept_points(columns: list[np.ndarray], max_points: int = MAX_POINTS) -> np.ndarray:
    """Sorted positions to draw of curves sharing one step axis: all of them up to
    `max_points`; beyond, each bin's lowest and highest finite value of every column, the
    first position of every run of NaN (where a line breaks) and both ends."""
    n = max((len(column) for column in columns), default=0)
    if n <= max_points:
        return np.arange(n)
    bins = np.repeat(np.arange(max_points // 2), np.diff(_edges(n, max_points // 2)))
    kept = [np.array([0, n - 1])]
    for column in columns:
        values = np.asarray(column, dtype=np.float64)
        finite = np.isfinite(values)
        gap = ~finite & np.r_[True, finite[:-1]]  # a NaN after a value (or first)
        kept += [np.flatnonzero(gap), _first_by_bin(np.where(finite, values, np.inf), bins),
                 _first_by_bin(np.where(finite, -values, np.inf), bins)]
    return np.unique(np.concatenate(kept))


def _edges(n: int, bins: int) -> np.ndarray:
    return np.linspace(0, n, bins + 1).round().astype(np.int64)


def _first_by_bin(score: np.ndarray, bins: np.ndarray) -> np.ndarray:
    """The position of each bin's smallest finite score (the earliest on a tie)."""
    order = np.lexsort((np.arange(len(score)), score, bins))
    first = order[np.r_[True, bins[order][1:] != bins[order][:-1]]]
    return first[np.isfinite(score[first])]
