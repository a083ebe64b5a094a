"""Step curves as Vega-Lite charts: one panel of lines over the step axis, the chosen step a
dotted rule; with an EMA, the raw curve stays faint underneath.

Drawn by Streamlit's own Vega-Lite (on a canvas), not Plotly: a page whose charts are all
Vega-Lite paints without loading Plotly's 4.7 MB script, about 0.7 s sooner in a fresh
browser (docs/benchmarks.md).  A panel is (data, spec): a long frame of (step, series, value,
raw) and a spec that reads its fields by fixed names; series names and titles are the
board's own words, never text from a dump, and the spec holds no expression.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from pages.figures.smoothing import RAW_OPACITY, ema
from pages.figures.traces import MARKERS_UP_TO

STEP, SERIES, VALUE, RAW = "step", "series", "value", "raw"
DASHES = {"solid": [1, 0], "dash": [6, 4], "dot": [2, 3]}


class Curve(NamedTuple):
    name: str  # the board's own label (a legend entry)
    y: np.ndarray  # a value a step, NaN where none
    color: str
    dash: str = "solid"  # a DASHES key


class Panel(NamedTuple):
    data: pd.DataFrame
    spec: dict


def panel(x: np.ndarray, curves: list[Curve], *, title: str, y_title: str,
          step: int | None = None, smoothing: float = 0.0, percent: bool = False,
          height: int = 240) -> Panel:
    """The curves on one step axis (x: the steps), an EMA of `smoothing` over each; `title`
    above the panel, `y_title` (a word or two) beside its axis; `height` the whole chart's
    (Streamlit fits title, axes and plot in it)."""
    frames = []
    for curve in curves:
        raw = np.asarray(curve.y, dtype=np.float64)
        frames.append(pd.DataFrame({STEP: np.asarray(x), SERIES: curve.name,
                                    VALUE: ema(raw, smoothing) if smoothing > 0 else raw,
                                    RAW: raw}))
    data = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        {STEP: [], SERIES: [], VALUE: [], RAW: []})
    # a short run's steps as dots too (a lone step has no line)
    return Panel(data, _spec(curves, (title, y_title), step, smoothing > 0, percent, height,
                             len(x) <= MARKERS_UP_TO))


def _spec(curves: list[Curve], titles: tuple[str, str], step: int | None, faint: bool,
          percent: bool, height: int, points: bool) -> dict:
    title, y_title = titles
    names = [c.name for c in curves]
    axis = {"title": y_title, **({"format": ".0%"} if percent else {})}
    y_scale = {"domain": [0, 1]} if percent else {"zero": False}  # a share: all of 0..1
    keys = {"color": {"field": SERIES, "type": "nominal", "legend": {"orient": "right",
                                                                      "title": None},
                      "scale": {"domain": names, "range": [c.color for c in curves]}},
            "strokeDash": {"field": SERIES, "type": "nominal", "legend": None,
                           "scale": {"domain": names,
                                     "range": [DASHES[c.dash] for c in curves]}}}
    x = {"field": STEP, "type": "quantitative", "title": STEP, "axis": {"format": "d"}}
    layers = [{"mark": {"type": "line", "opacity": RAW_OPACITY},
               "encoding": {"x": x, "y": {"field": RAW, "type": "quantitative"}, **keys}}
              ] if faint else []
    layers.append({"mark": {"type": "line", "point": points},
                   "encoding": {"x": x, "y": {"field": VALUE, "type": "quantitative",
                                              "axis": axis, "scale": y_scale}, **keys,
                                "tooltip": [{"field": STEP, "type": "quantitative"},
                                            {"field": SERIES, "type": "nominal"},
                                            {"field": VALUE, "type": "quantitative",
                                             "format": ".4g"}]}})
    if percent:  # above the 50% line, RL beats the reference
        layers.append({"mark": {"type": "rule", "strokeDash": [2, 3], "color": "grey"},
                       "encoding": {"y": {"datum": 0.5}}})
    if step is not None:
        layers.append({"mark": {"type": "rule", "strokeDash": [2, 2], "color": "#666"},
                       "encoding": {"x": {"datum": int(step)}}})
    return {"height": height, "layer": layers, "title": {"text": title, "anchor": "start",
                                                          "fontSize": 13},
            "usermeta": {"embedOptions": {"renderer": "canvas"}}}
