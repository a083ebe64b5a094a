"""Pure builders of the Metrics page: grouped metric names and one compact chart per metric.

The charts are Vega-Lite (on a canvas), as every step curve of the board: a page of them
paints without loading Plotly's script, which cost a fresh browser about 0.8 s (the
yardstick of docs/benchmarks.md).

The frame is a MetricFrame's `.frame`: indexed by step, one float column per metric and a
`time` column (wall-clock seconds) when a source logs it. Steps where a metric was not
logged are NaN in its column and are skipped, so sparse metrics draw as connected curves.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import regex as regex_engine

from loaders.find.walk import natural_key
from loaders.metrics.collect import TIME
from pages.figures import glossary
from pages.figures.curve_points import MARKERS_UP_TO, kept_points
from pages.figures.search import matching
from pages.figures.smoothing import RAW_OPACITY, column_values, ema, first_value
from pages.figures.step_panels import RAW, STEP, VALUE, Panel
from pages.figures.vega import ONE_MARK, titled

STEP_AXIS, TIME_AXIS = "step", "time"
HEIGHT = 260  # the whole chart's: title, axes and plot
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


def _axis(frame: pd.DataFrame, x_axis: str) -> tuple[np.ndarray, str, list[str]]:
    """x values, axis title and title notes; time falls back to step when it is not logged."""
    steps = frame.index.to_numpy(dtype=np.float64)
    if x_axis != TIME_AXIS:
        return steps, STEP_AXIS, []
    if not _has_time(frame):
        return steps, STEP_AXIS, ["no wall time logged, over step"]
    seconds = column_values(frame, TIME)
    return (seconds - first_value(seconds)) / 60.0, "minutes since first logged time", []


def metric_chart(frame: pd.DataFrame, name: str, *, smoothing: float = 0.0,
                 x_axis: str = STEP_AXIS, step: int | None = None) -> Panel:
    """One metric over step (or minutes of wall time), EMA-smoothed with the raw curve faint,
    the chosen `step` a dotted rule (on the step axis).  A long run's curve keeps each bin's
    lowest and highest point (curve_points.py); the EMA runs over every point first."""
    x, x_title, notes = _axis(frame, x_axis)
    y, steps = column_values(frame, name), frame.index.to_numpy(dtype=np.float64)
    present = np.isfinite(x) & np.isfinite(y)
    x, y, steps = x[present], y[present], steps[present]
    value = ema(y, smoothing) if smoothing > 0 else y
    kept = kept_points([value] + [y] * (smoothing > 0))
    data = pd.DataFrame({X: x[kept], STEP: steps[kept], VALUE: value[kept], RAW: y[kept]})
    if not y.size:
        notes.append("no values")
    title = f"{name} ({'; '.join(notes)})" if notes else name
    rule = step if x_title == STEP_AXIS else None
    return Panel(data, _spec(title, x_title, (smoothing > 0, len(kept) <= MARKERS_UP_TO), rule))


X = "x"  # the chart's x: a step, or minutes since the first logged time


def _spec(title: str, x_title: str, drawn: tuple[bool, bool], step: int | None) -> dict:
    """drawn: (a faint raw curve, points on the curve).  The metric's name is the title's
    text, drawn on the canvas as it is: never a tooltip's field, never an expression."""
    faint, points = drawn
    x = {"field": X, "type": "quantitative", "title": x_title,
         **({"axis": {"format": "d"}} if x_title == STEP_AXIS else {})}
    y = {"field": VALUE, "type": "quantitative", "title": None, "scale": {"zero": False}}
    layers = []
    if faint:
        layers.append({"mark": {"type": "line", "opacity": RAW_OPACITY, "color": COLOR,
                                "tooltip": None},
                       "encoding": {"x": x, "y": {**y, "field": RAW}}})
    tooltip = [{"field": STEP, "type": "quantitative", "format": "d"},
               {"field": VALUE, "type": "quantitative", "format": ".4g"}]
    layers.append({"mark": {"type": "line", "color": COLOR,
                            "point": {"size": 16, "color": COLOR} if points else False},
                   "encoding": {"x": x, "y": y, "tooltip": tooltip}})
    if step is not None:
        layers.append({"data": ONE_MARK,
                       "mark": {"type": "rule", "strokeDash": [2, 2], "color": "#666"},
                       "encoding": {"x": {"datum": int(step)}}})
    return {"height": HEIGHT, "layer": layers, **titled(title)}
