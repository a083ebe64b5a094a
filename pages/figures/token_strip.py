"""The overview of a whole response: one strip per token metric, binned to the chart width.

A 32k-token response has far more tokens than the chart has pixels, so each strip shows per
bin the min–max band and the mean: a single extreme token still widens its bin's band to
its value, where a mean alone (or a one-in-N sample) would hide it.  A strip is a Vega-Lite
chart on a canvas (Streamlit's own chart library: the Sample page then loads no Plotly,
1.3 s of its first paint): a band, a line and at most BINS invisible hover points, no
element a token.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pandas as pd

from pages.figures.vega import CANVAS

BINS = 800  # about one bin per 1.5 px of a wide chart: what the eye resolves
ROW_PX = 100  # a strip's chart: its plot and token axis
_WINDOW_FILL = "rgba(255,193,7,0.25)"
_EDGE = "rgba(31,119,180,0.6)"  # a bin's min and max, over the band


class Binned(NamedTuple):
    start: np.ndarray  # first token of each bin
    end: np.ndarray  # one past its last token
    low: np.ndarray  # NaN where the bin has no finite value
    high: np.ndarray
    mean: np.ndarray


def bin_edges(n: int, bins: int = BINS) -> np.ndarray:
    """bins+1 token edges splitting 0..n into nearly equal runs (one token a bin when short)."""
    count = max(1, min(n, bins))
    return np.linspace(0, n, count + 1).round().astype(np.int64)


def binned(values: np.ndarray, bins: int = BINS) -> Binned:
    """Min, max and mean of the finite values of each bin; non-finite tokens are skipped."""
    values = np.asarray(values, dtype=np.float64)
    edges = bin_edges(len(values), bins)
    start, end = edges[:-1], edges[1:]
    if not len(values):
        empty = np.zeros(0)
        return Binned(start[:0], end[:0], empty, empty, empty)
    finite = np.isfinite(values)
    count = np.add.reduceat(finite.astype(np.int64), start)
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.minimum.reduceat(np.where(finite, values, np.inf), start)
        high = np.maximum.reduceat(np.where(finite, values, -np.inf), start)
        mean = np.add.reduceat(np.where(finite, values, 0.0), start) / count
    empty = count == 0
    low[empty] = high[empty] = mean[empty] = np.nan
    return Binned(start, end, low, high, mean)


def position_of(selection: dict, n: int) -> int | None:
    """The token a strip's brush starts at (its left edge); None when it names none.

    The strips are brushed, not clicked: a click on a 32k-token strip would need a mark a
    token.  Vega-Lite's interval selection names its edges by field (`{"brush": {TOKEN:
    [lo, hi]}}`); an edge that is no number names no token."""
    edges = (selection.get(BRUSH) or {}).get(TOKEN) or []
    try:
        x = min(float(edge) for edge in edges) if edges else math.nan
    except (TypeError, ValueError):
        return None
    if not math.isfinite(x):
        return None
    return int(min(max(0, round(x)), max(0, n - 1)))


TOKEN, START, END, LOW, HIGH, MEAN = "token", "first", "last", "low", "high", "mean"
BRUSH = "brush"  # the interval selection's name: Streamlit reports it under this key


class Strip(NamedTuple):
    name: str  # the metric's, shown above the chart as text (the page's caption)
    data: pd.DataFrame  # a row a bin: its middle token, first and last, low, high and mean
    spec: dict


def strip_charts(columns: dict[str, np.ndarray], window: tuple[int, int],
                 marks: list[tuple[int, str]] = (), hits: dict[str, np.ndarray] | None = None,
                 bins: int = BINS) -> list[Strip]:
    """One Vega-Lite strip per metric (each with the whole response on its x axis): the
    min–max band and mean of each bin, the window shaded, marks (e.g. <think>) as labelled
    lines, and `hits` (positions past a threshold) as dots; brushing one selects a place.

    Drawn on a canvas: a bin's hover is an invisible point (800 a strip), no DOM element.
    Mark labels are data, never part of an expression (text on a canvas); the metric's name
    is the page's to show above its strip."""
    n = max((len(v) for v in columns.values()), default=0)
    out = []
    for name, values in columns.items():
        data = binned(values, bins)
        frame = pd.DataFrame({TOKEN: (data.start + data.end - 1) / 2, START: data.start,
                              END: data.end - 1, LOW: data.low, HIGH: data.high,
                              MEAN: data.mean})
        dots = _hit_values(values, (hits or {}).get(name, ()))
        out.append(Strip(name, frame, _strip_spec(n, window, marks, dots)))
    return out


MAX_HIT_MARKS = 300  # dots a strip; beyond this, dots say no more than the band


def _hit_values(values: np.ndarray, positions: np.ndarray) -> list[dict]:
    positions = np.asarray(positions, dtype=np.int64)
    shown = positions[:: max(1, -(-len(positions) // MAX_HIT_MARKS))]
    return [{TOKEN: int(p), MEAN: float(v)} for p, v in zip(shown.tolist(),
                                                            np.asarray(values)[shown].tolist())]


def _strip_spec(n: int, window: tuple[int, int], marks: list[tuple[int, str]],
                dots: list[dict]) -> dict:
    # the whole response, as domainMin/domainMax, not a fixed `domain`: a fixed one makes
    # the scale a constant, and Vega-Lite's interval brush then reads brush_token[0] before
    # any brush exists when the stacked chart is fitted to its width (a TypeError in the
    # browser's console on every load); min and max keep the scale data-driven
    x = {"field": TOKEN, "type": "quantitative", "title": None,
         "scale": {"domainMin": -0.5, "domainMax": max(n, 1) - 0.5, "nice": False,
                   "zero": False},
         "axis": {"format": "d"}}
    y = {"type": "quantitative", "scale": {"zero": False}}
    layers = [
        {"data": {"values": [{"x0": window[0] - 0.5, "x1": window[1] - 0.5}]},
         "mark": {"type": "rect", "color": _WINDOW_FILL, "stroke": "rgba(255,152,0,0.9)"},
         "encoding": {"x": {"field": "x0", "type": "quantitative"},
                      "x2": {"field": "x1"}}},
        {"params": [{"name": BRUSH, "select": {"type": "interval", "encodings": ["x"]}}],
         "mark": {"type": "area", "color": "rgba(31,119,180,0.35)"},
         "encoding": {"x": x, "y": {**y, "field": LOW, "axis": _Y_AXIS},
                      "y2": {"field": HIGH}}},
        # the band's edges as lines: a lone extreme bin is a spike 1-2 px wide, which the
        # band's pale fill all but hides (a 32k-token answer's final-token reward, at the
        # strip's end, was a sliver no one saw)
        *({"mark": {"type": "line", "color": _EDGE, "strokeWidth": 1},
           "encoding": {"x": x, "y": {**y, "field": edge}}} for edge in (LOW, HIGH)),
        {"mark": {"type": "line", "color": "#1f77b4", "strokeWidth": 1},
         "encoding": {"x": x, "y": {**y, "field": MEAN}}},
        {"mark": {"type": "point", "opacity": 0, "size": 30},
         "encoding": {"x": x, "y": {**y, "field": MEAN}, "tooltip": [
             {"field": START, "title": "first token"}, {"field": END, "title": "last token"},
             {"field": MEAN, "format": ".4g"}, {"field": LOW, "title": "min", "format": ".4g"},
             {"field": HIGH, "title": "max", "format": ".4g"}]}}]
    if dots:
        layers.append({"data": {"values": dots},
                       "mark": {"type": "point", "shape": "diamond", "filled": True,
                                "color": "#d62728", "size": 40},
                       "encoding": {"x": x, "y": {**y, "field": MEAN}, "tooltip": [
                           {"field": TOKEN, "title": "token"},
                           {"field": MEAN, "title": "value (past the threshold)",
                            "format": ".4g"}]}})
    if marks:
        at = {"data": {"values": [{TOKEN: int(p), "label": str(label)} for p, label in marks]},
              "encoding": {"x": x}}
        layers += [{**at, "mark": {"type": "rule", "strokeDash": [2, 2], "color": "#2ca02c"}},
                   {**at, "mark": {"type": "text", "color": "#2ca02c", "fontSize": 10,
                                   "align": "left", "baseline": "top", "dx": 2, "y": 0},
                    "encoding": {**at["encoding"], "text": {"field": "label"}}}]
    return {"height": ROW_PX, "layer": layers,
            **CANVAS}


# one width of y axis for every strip: their plots line up on the token axis
_Y_AXIS = {"title": None, "tickCount": 3, "minExtent": 44, "maxExtent": 44}


def think_marks(tokens: list[str], text_marks: tuple[str, ...] = ("<think>", "</think>"),
                limit: int = 20) -> list[tuple[int, str]]:
    """(token position, mark) where the response's text has each mark, also when the
    tokenizer split it over several tokens; at most `limit` of them."""
    text = "".join(tokens)
    if not any(mark in text for mark in text_marks):
        return []
    ends = np.cumsum(np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens)))
    found = []
    for mark in text_marks:
        at = text.find(mark)
        while at >= 0 and len(found) < limit:
            found.append((int(np.searchsorted(ends, at, side="right")), mark))
            at = text.find(mark, at + len(mark))
    return sorted(found)


def turn_marks(turns: np.ndarray, limit: int = 40) -> list[tuple[int, str]]:
    """(token position, 'turn k') where a multi-turn response enters turn k, after its
    first; at most `limit` of them (each is a line and a label on the strips)."""
    turns = np.asarray(turns)
    if len(turns) < 2:
        return []
    starts = np.flatnonzero(turns[1:] != turns[:-1]) + 1
    return [(int(p), f"turn {int(turns[p])}") for p in starts[:limit] if turns[p] >= 0]
