"""Pure builders of the Metrics page: grouped metric names and one compact chart per metric.

The frame is a MetricFrame's `.frame`: indexed by step, one float column per metric and a
`time` column (wall-clock seconds) when a source logs it. Steps where a metric was not
logged are NaN in its column and are skipped, so sparse metrics draw as connected curves.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import regex as regex_engine

from loaders.find.walk import natural_key
from loaders.metrics.collect import TIME
from pages.figures import glossary, traces
from pages.figures.search import matching
from pages.figures.smoothing import RAW_OPACITY, column_values, ema, first_value
from pages.figures.text import plot_text

STEP_AXIS, TIME_AXIS = "step", "time"
MAX_POINTS = 5000  # above this a chart draws every k-th point
MARKERS_UP_TO = traces.MARKERS_UP_TO
HEIGHT = 260
COLOR = "#1f77b4"
FALLBACK_HELP = ("No built-in description for this metric; see the trainer's documentation for "
                 "how it is computed.")


def _matcher(pattern: str) -> regex_engine.Pattern | None:
    if not pattern.strip():
        return None
    try:
        return regex_engine.compile(pattern, regex_engine.IGNORECASE)
    except regex_engine.error as err:
        raise ValueError(f"invalid filter pattern {pattern!r}: {err.msg} "
                         f"(at position {err.pos})") from err


def _group_key(group: str) -> tuple[float, str]:
    order = {g: i for i, g in enumerate(glossary.GROUP_ORDER)}
    # unknown groups sit between the known ones and "other", alphabetically
    return (order.get(group, order[glossary.OTHER] - 0.5), group)


def group_metrics(names: list[str], pattern: str = "") -> dict[str, list[str]]:
    """Names matching a case-insensitive regex, by display group in a stable order."""
    matcher = _matcher(pattern)  # a slow one raises SearchTooSlow, a ValueError
    kept = names if matcher is None else [n for n, ok in zip(names, matching(matcher, names))
                                          if ok]
    groups: dict[str, list[str]] = {}
    for name in kept:
        groups.setdefault(glossary.group_of(name), []).append(name)
    return {g: sorted(groups[g], key=natural_key) for g in sorted(groups, key=_group_key)}


def metric_help(name: str) -> str:
    """The glossary's explanation of a metric, or a generic sentence for unknown names."""
    return glossary.explain(name) or FALLBACK_HELP


def _has_time(frame: pd.DataFrame) -> bool:
    return bool(np.isfinite(column_values(frame, TIME)).any())


def x_axis_options(frame: pd.DataFrame) -> list[str]:
    """The x axes a metric chart can use: step always, wall time when it was logged."""
    return [STEP_AXIS, TIME_AXIS] if _has_time(frame) else [STEP_AXIS]


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def thin(n: int, max_points: int = MAX_POINTS) -> tuple[np.ndarray, int]:
    """Indices of every k-th of n points (the last one kept) so at most max_points remain."""
    if n <= max_points:
        return np.arange(n), 1
    k = math.ceil(n / (max_points - 1))
    keep = np.arange(0, n, k)
    return (keep if keep[-1] == n - 1 else np.append(keep, n - 1)), k


def _axis(frame: pd.DataFrame, x_axis: str) -> tuple[np.ndarray, str, list[str]]:
    """x values, axis title and title notes; time falls back to step when it is not logged."""
    steps = frame.index.to_numpy(dtype=np.float64)
    if x_axis != TIME_AXIS:
        return steps, STEP_AXIS, []
    if not _has_time(frame):
        return steps, STEP_AXIS, ["no wall time logged, over step"]
    seconds = column_values(frame, TIME)
    return (seconds - first_value(seconds)) / 60.0, "minutes since first logged time", []


def _traces(fig: go.Figure, x: np.ndarray, y: np.ndarray, steps: np.ndarray, name: str,
            smoothing: float, keep: np.ndarray) -> None:
    """The faint raw curve (when smoothed) and the main curve, both thinned to `keep`."""
    shown = ema(y, smoothing) if smoothing > 0 else y  # smoothed on every point, then thinned
    if smoothing > 0:
        fig.add_trace(traces.line(x[keep], y=y[keep], name=f"{name} (raw)", mode="lines",
                                   line={"color": COLOR}, opacity=RAW_OPACITY, showlegend=False,
                                   hoverinfo="skip"))
    mode = "lines+markers" if keep.size <= MARKERS_UP_TO else "lines"
    fig.add_trace(traces.line(x[keep], y=shown[keep], name=name, mode=mode,
                               line={"color": COLOR}, marker={"size": 4, "color": COLOR},
                               customdata=steps[keep],
                               hovertemplate=f"step %{{customdata:.0f}}<br>{plot_text(name)}: "
                                             "%{y:.4g}<extra></extra>"))


def metric_figure(frame: pd.DataFrame, name: str, *, smoothing: float = 0.0,
                  x_axis: str = STEP_AXIS) -> go.Figure:
    """One metric over step (or minutes of wall time), EMA-smoothed with the raw curve faint."""
    x, x_title, notes = _axis(frame, x_axis)
    y, steps = column_values(frame, name), frame.index.to_numpy(dtype=np.float64)
    present = np.isfinite(x) & np.isfinite(y)
    x, y, steps = x[present], y[present], steps[present]
    keep, k = thin(y.size)
    if k > 1:
        notes.append(f"every {_ordinal(k)} of {y.size:,} points")
    fig = go.Figure()
    if y.size:
        _traces(fig, x, y, steps, name, smoothing, keep)
    else:
        fig.add_annotation(text=f"no values of {plot_text(name)}", showarrow=False)
    title = f"{plot_text(name)} ({'; '.join(notes)})" if notes else plot_text(name)
    fig.update_layout(title={"text": title, "font": {"size": 14}}, height=HEIGHT,
                      margin={"l": 10, "r": 10, "t": 40, "b": 10}, showlegend=False,
                      xaxis_title=x_title, hovermode="x")
    return fig
