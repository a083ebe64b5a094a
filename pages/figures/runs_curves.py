"""Compare runs' overlaid curves as Vega-Lite charts: one colour a run, each run's ± k·std
band under its curve and, with an EMA, its raw curve faint underneath.

Drawn by Streamlit's Vega-Lite on a canvas, as the single-run step panels are
(step_panels.py), not by Plotly: the Curves view of three long runs, five charts, painted in a
fresh browser in 4.98 s with Plotly's and in 2.17 s with no chart at all (docs/benchmarks.md,
session 26).  A chart is (data, spec): a long frame of (x, run, value, raw, low, high).  A
run's label is a data value, drawn on the canvas as text: never markup, never part of an
expression.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from loaders import schema as S
from pages.figures.curve_points import MARKERS_UP_TO, kept_points
from pages.figures.runs import STEP_AXIS, TIME_AXIS, Series
from pages.figures.smoothing import BAND_OPACITY, RAW_OPACITY, column_values, ema
from pages.figures.step_panels import HIGH, LOW, RAW, SERIES, STEP, VALUE, Panel
from pages.figures.vega import ONE_MARK, titled

HEIGHT = 360
HOURS = "hours since the run's first step"


def overlay_chart(series: Sequence[Series], column: str, *, band_k: float = 0.0,
                  smoothing: float = 0.0, title: str = "", x_axis: str = STEP_AXIS,
                  times: Sequence[pd.Series | None] = ()) -> Panel:
    """`column` of every run over step (or wall time), one colour a run; with band_k > 0,
    the per-step mean column's ± k·std band around it (column must be a '_mean' stat)."""
    banded = band_k > 0 and column.endswith("_mean")
    frames, x_title = [], S.STEP
    for i, one in enumerate(series):
        x, x_title = run_x(one.frame, x_axis, times[i] if i < len(times) else None)
        frames.append(_rows(one, x, column, band_k if banded else 0.0, smoothing))
    data = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        {STEP: [], SERIES: [], VALUE: [], RAW: [], LOW: [], HIGH: []})
    note = f" (EMA {smoothing:g}, raw faint)" if smoothing > 0 else ""
    points = max((len(one.frame) for one in series), default=0) <= MARKERS_UP_TO
    return Panel(data, _spec(series, (title or column) + note, x_title,
                             (banded and data[LOW].notna().any(), smoothing > 0, points)))


def run_x(frame: pd.DataFrame, x_axis: str, times: pd.Series | None) -> tuple[np.ndarray, str]:
    """Steps, or hours since the run's first logged wall time when it logged one."""
    steps = frame.index.to_numpy(dtype=np.float64)
    if x_axis != TIME_AXIS or times is None or not np.isfinite(times.to_numpy(float)).any():
        return steps, S.STEP
    seconds = times.reindex(frame.index).astype("float64")
    return ((seconds - seconds.min()) / 3600.0).to_numpy(), HOURS


def _rows(one: Series, x: np.ndarray, column: str, band_k: float,
          smoothing: float) -> pd.DataFrame:
    """One run's points to draw: all of a short run, a long one's bins' extremes."""
    raw = column_values(one.frame, column)
    value = ema(raw, smoothing) if smoothing > 0 else raw
    low = high = np.full(len(raw), np.nan)
    if band_k > 0:
        std = column_values(one.frame, column[: -len("mean")] + "std")
        high, low = raw + band_k * std, raw - band_k * std
        if smoothing > 0:
            high, low = ema(high, smoothing), ema(low, smoothing)
    kept = kept_points([value] + [raw] * (smoothing > 0) + [low, high] * (band_k > 0))
    return pd.DataFrame({STEP: x[kept], SERIES: one.label, VALUE: value[kept],
                         RAW: raw[kept], LOW: low[kept], HIGH: high[kept]})


def _spec(series: Sequence[Series], title: str, x_title: str,
          drawn: tuple[bool, bool, bool]) -> dict:
    """drawn: (a band, a faint raw curve, points on the curve)."""
    band, faint, points = drawn
    colour = _by_run([s.label for s in series], [s.colour for s in series])
    x = {"field": STEP, "type": "quantitative", "title": x_title,
         **({"axis": {"format": "d"}} if x_title == S.STEP else {})}
    y = {"field": VALUE, "type": "quantitative", "title": None, "scale": {"zero": False}}
    # the bands and faint curves show no hover values of their own (a band's would be its
    # edges, unformatted): hovering a run's curve gives its step, label and value
    quiet = {"tooltip": None}
    layers = []
    if band:
        layers.append({"mark": {"type": "area", "opacity": BAND_OPACITY, **quiet},
                       "encoding": {"x": x, "y": {"field": LOW, "type": "quantitative",
                                                  "stack": None},
                                    "y2": {"field": HIGH}, "color": colour}})
    if faint:
        layers.append({"mark": {"type": "line", "opacity": RAW_OPACITY, **quiet},
                       "encoding": {"x": x, "y": {**y, "field": RAW}, "color": colour}})
    tooltip = [{"field": STEP, "type": "quantitative", "title": x_title},
               {"field": SERIES, "type": "nominal", "title": "run"},
               {"field": VALUE, "type": "quantitative", "format": ".4g", "title": "value"}]
    layers.append({"mark": {"type": "line", "point": points},
                   "encoding": {"x": x, "y": y, "color": colour, "tooltip": tooltip}})
    return {"height": HEIGHT, "layer": layers, **titled(title)}


def _by_run(names: list[str], colours: list[str]) -> dict:
    """The colour encoding: a run's own colour for each name (data values, drawn as text),
    the legend under the chart."""
    return {"field": SERIES, "type": "nominal", "title": "run",
            "scale": {"domain": names, "range": colours},
            "legend": {"orient": "bottom", "title": None}}


A, B = "a", "b"  # the baseline's and the other run's values in a difference's rows


def difference_chart(diffs: Sequence[Series], title: str, baseline: str) -> Panel:
    """B − A per common step for each run B against the baseline A (frames from
    loaders.serve.runset.step_difference), over the zero line."""
    names = [f"{one.label} − {baseline}" for one in diffs]
    frames = [_difference_rows(one, name) for one, name in zip(diffs, names)]
    data = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        {STEP: [], SERIES: [], VALUE: [], A: [], B: []})
    common = sum(len(d.frame) for d in diffs)
    colour = _by_run(names, [d.colour for d in diffs])
    tooltip = [{"field": STEP, "type": "quantitative", "title": S.STEP},
               {"field": SERIES, "type": "nominal", "title": "B − A"},
               {"field": VALUE, "type": "quantitative", "format": ".4g", "title": "value"},
               {"field": A, "type": "quantitative", "format": ".4g", "title": "A"},
               {"field": B, "type": "quantitative", "format": ".4g", "title": "B"}]
    x = {"field": STEP, "type": "quantitative", "title": S.STEP, "axis": {"format": "d"}}
    points = max((len(d.frame) for d in diffs), default=0) <= MARKERS_UP_TO
    layers = [{"data": ONE_MARK, "mark": {"type": "rule", "strokeDash": [2, 3],
                                          "color": "grey"},
               "encoding": {"y": {"datum": 0}}},
              {"mark": {"type": "line", "point": points},
               "encoding": {"x": x, "y": {"field": VALUE, "type": "quantitative", "title": None},
                            "color": colour, "tooltip": tooltip}}]
    text = f"{title} — B − A on common steps ({common} points)"
    return Panel(data, {"height": 340, "layer": layers, **titled(text)})


def _difference_rows(one: Series, name: str) -> pd.DataFrame:
    """One run's B − A points to draw (a long run's bins' extremes), with A and B."""
    delta = column_values(one.frame, S.DELTA)
    kept = kept_points([delta])
    return pd.DataFrame({STEP: one.frame.index.to_numpy(dtype=np.float64)[kept],
                         SERIES: name, VALUE: delta[kept],
                         A: column_values(one.frame, A)[kept],
                         B: column_values(one.frame, B)[kept]})
