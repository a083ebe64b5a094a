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

from pages.figures.curve_points import MARKERS_UP_TO, kept_points
from pages.figures.smoothing import BAND_OPACITY, RAW_OPACITY, ema
from pages.figures.vega import ONE_MARK, titled

STEP, SERIES, VALUE, RAW, LOW, HIGH = "step", "series", "value", "raw", "low", "high"
DASHES = {"solid": [1, 0], "dash": [6, 4], "dot": [2, 3]}
PICK = "pick"  # a click's point selection: Streamlit reports it under this key
ALERT_COLOR, ALERT_OPACITY = "#d62728", 0.12


class Curve(NamedTuple):
    name: str  # the board's own label (a legend entry)
    y: np.ndarray  # a value a step, NaN where none
    color: str
    dash: str = "solid"  # a DASHES key


class Panel(NamedTuple):
    data: pd.DataFrame
    spec: dict


class Marks(NamedTuple):
    """What a panel marks besides its curves and the chosen step."""
    alerts: tuple[int, ...] = ()  # steps of strong alerts: faint red bands
    band: tuple[np.ndarray, np.ndarray] | None = None  # the first curve's low and high a step
    pick: bool = False  # a click picks the nearest step (PICK)


def panel(x: np.ndarray, curves: list[Curve], *, title: str, y_title: str,
          step: int | None = None, smoothing: float = 0.0, percent: bool = False,
          height: int = 240, marks: Marks | None = None, legend: bool | dict = True
          ) -> Panel:
    """The curves on one step axis (x: the steps), an EMA of `smoothing` over each; `title`
    above the panel, `y_title` (a word or two) beside its axis; `height` the whole chart's
    (Streamlit fits title, axes and plot in it); the chosen `step` a dotted rule.  `marks`:
    a band, alert steps and a click; no `legend` for a panel whose title names its curve,
    or a legend of its own (Vega-Lite's legend properties) where the curves' names are
    long."""
    marks = marks or Marks()
    frames = []
    for i, curve in enumerate(curves):
        raw = np.asarray(curve.y, dtype=np.float64)
        value = ema(raw, smoothing) if smoothing > 0 else raw
        banded = marks.band is not None and i == 0
        low, high = (np.asarray(edge, dtype=np.float64) for edge in marks.band) if banded \
            else (np.full(len(raw), np.nan),) * 2
        # a long run: each bin's extremes of what is drawn (the raw curve only under an EMA)
        kept = kept_points([value] + [raw] * (smoothing > 0) + [low, high] * banded)
        frames.append(pd.DataFrame({STEP: np.asarray(x)[kept], SERIES: curve.name,
                                    VALUE: value[kept], RAW: raw[kept], LOW: low[kept],
                                    HIGH: high[kept]}))
    data = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        {STEP: [], SERIES: [], VALUE: [], RAW: [], LOW: [], HIGH: []})
    # a short run's steps as dots too (a lone step has no line)
    spec = _spec(curves, (title, y_title), (step, marks), smoothing > 0, percent, height,
                 len(x) <= MARKERS_UP_TO)
    if legend is not True:
        for layer in spec["layer"]:
            layer.get("encoding", {}).get("color", {}).update(legend=legend or None)
    return Panel(data, spec)


def _spec(curves: list[Curve], titles: tuple[str, str], marked: tuple[int | None, Marks],
          faint: bool, percent: bool, height: int, points: bool) -> dict:
    title, y_title = titles
    step, marks = marked
    names = [c.name for c in curves]
    # a fixed room for the y labels: panels stacked on one page keep their x axes aligned
    axis = {"title": y_title, "minExtent": 44, **({"format": ".0%"} if percent else {})}
    y_scale = {"domain": [0, 1]} if percent else {"zero": False}  # a share: all of 0..1
    # a line's sample as the legend's symbol: a dashed series' circle read as a cog
    keys = {"color": {"field": SERIES, "type": "nominal", "legend": {
                "orient": "right", "title": None, "symbolType": "stroke"},
                      "scale": {"domain": names, "range": [c.color for c in curves]}},
            "strokeDash": {"field": SERIES, "type": "nominal", "legend": None,
                           "scale": {"domain": names,
                                     "range": [DASHES[c.dash] for c in curves]}}}
    x = {"field": STEP, "type": "quantitative", "title": STEP, "axis": {"format": "d"}}
    y = {"field": VALUE, "type": "quantitative", "axis": axis, "scale": y_scale}
    layers = _alert_layers(marks.alerts) + _band_layers(curves, marks, x)
    if faint:
        layers.append({"mark": {"type": "line", "opacity": RAW_OPACITY},
                       "encoding": {"x": x, "y": {"field": RAW, "type": "quantitative"},
                                    **keys}})
    tooltip = [{"field": STEP, "type": "quantitative"}, {"field": SERIES, "type": "nominal"},
               {"field": VALUE, "type": "quantitative", "format": ".4g"}]
    layers.append({"mark": {"type": "line", "point": points},
                   "encoding": {"x": x, "y": y, **keys, "tooltip": tooltip}})
    if marks.pick:  # a click anywhere picks the nearest step's point
        layers.append({"mark": {"type": "point", "opacity": 0},
                       "params": [{"name": PICK, "select": {
                           "type": "point", "fields": [STEP], "on": "click", "nearest": True,
                           "clear": "dblclick"}}],
                       "encoding": {"x": x, "y": y, "tooltip": tooltip}})
    if percent:  # above the 50% line, RL beats the reference
        layers.append({"data": ONE_MARK,
                       "mark": {"type": "rule", "strokeDash": [2, 3], "color": "grey"},
                       "encoding": {"y": {"datum": 0.5}}})
    if step is not None:
        layers.append({"data": ONE_MARK,
                       "mark": {"type": "rule", "strokeDash": [2, 2], "color": "#666"},
                       "encoding": {"x": {"datum": int(step)}}})
    return {"height": height, "layer": layers, **titled(title)}


def _alert_layers(alerts: tuple[int, ...]) -> list[dict]:
    """The strong alerts' steps as faint red bands a step wide, under the curves."""
    if not alerts:
        return []
    values = [{"from": step - 0.5, "to": step + 0.5} for step in sorted(set(map(int, alerts)))]
    return [{"data": {"values": values},
             "mark": {"type": "rect", "color": ALERT_COLOR, "opacity": ALERT_OPACITY},
             "encoding": {"x": {"field": "from", "type": "quantitative"},
                          "x2": {"field": "to"}}}]


def _band_layers(curves: list[Curve], marks: Marks, x: dict) -> list[dict]:
    """The first curve's band, in its colour (a lone step's as a bar: an area of one point
    has no width)."""
    if marks.band is None or not curves:
        return []
    low, high = (np.asarray(edge, dtype=np.float64) for edge in marks.band)
    shown = int((np.isfinite(low) & np.isfinite(high)).sum())
    if not shown:
        return []
    mark = {"type": "area", "opacity": BAND_OPACITY, "color": curves[0].color} if shown > 1 \
        else {"type": "rule", "strokeWidth": 6, "opacity": BAND_OPACITY,
              "color": curves[0].color}
    return [{"transform": [{"filter": {"field": SERIES, "equal": curves[0].name}}],
             "mark": mark,
             "encoding": {"x": x, "y": {"field": LOW, "type": "quantitative"},
                          "y2": {"field": HIGH}}}]
