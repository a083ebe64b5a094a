"""The overview of a whole response: one strip per token metric, binned to the chart width.

A 32k-token response has far more tokens than the chart has pixels, so each strip shows per
bin the min–max band and the mean: a single extreme token still widens its bin's band to
its value, where a mean alone (or a one-in-N sample) would hide it.  Figures stay a few
SVG line traces whatever the length (a path each: WebGL would cost a context per strip):
no mark, element or label per token.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import plotly.graph_objects as go

from pages.figures.text import plot_text

BINS = 800  # about one bin per 1.5 px of a wide chart: what the eye resolves
ROW_PX = 86
_WINDOW_FILL = "rgba(255,193,7,0.25)"


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
    """The token a chart selection points at: a brushed box's left edge (or a selected
    point's x); None when the selection names none.

    The strips are brushed, not clicked: Streamlit reports clicks only on points and only
    outside select mode, and points along a 32k-token strip would be an element each."""
    boxes = selection.get("box") or []
    if boxes and boxes[0].get("x"):
        x = min(boxes[0]["x"])
    elif selection.get("points"):
        x = selection["points"][0].get("x")
    else:
        return None
    if x is None:
        return None
    return int(min(max(0, round(float(x))), max(0, n - 1)))


def strip_figure(columns: dict[str, np.ndarray], window: tuple[int, int],
                 marks: list[tuple[int, str]] = (), hits: dict[str, np.ndarray] | None = None,
                 bins: int = BINS) -> go.Figure:
    """One strip per metric (rows share the token axis), the window shaded, marks (e.g.
    <think>) as labelled lines, and `hits` (positions past a threshold) as dots.

    Built as one dict and validated once: trace by trace, plotly's checks cost more than
    the binning."""
    names = list(columns)
    rows = max(1, len(names))
    gap = 0.04 if rows > 1 else 0.0
    height = (1 - gap * (rows - 1)) / rows
    n = max((len(v) for v in columns.values()), default=0)
    traces, layout = [], {}
    for i, name in enumerate(names):
        axis = "" if i == 0 else str(i + 1)
        top = 1 - i * (height + gap)
        layout[f"yaxis{axis}"] = {"domain": [max(0.0, top - height), top], "fixedrange": True,
                                  "title": {"text": plot_text(name)}, "zeroline": True}
        traces += _strip(binned(columns[name], bins), f"y{axis}", name)
        if hits and len(hits.get(name, ())):
            traces.append(_hits(columns[name], hits[name], f"y{axis}", name))
    layout.update(_decorations(n, window, marks, rows))
    return go.Figure({"data": traces, "layout": layout})


def _strip(data: Binned, yaxis: str, name: str) -> list[dict]:
    x = (data.start + data.end - 1) / 2
    band = {"type": "scatter", "x": x, "yaxis": yaxis, "mode": "lines",
            "line": {"width": 0}, "hoverinfo": "skip", "showlegend": False}
    custom = np.column_stack([data.start, data.end - 1, data.low, data.high])
    return [{**band, "y": data.high},
            {**band, "y": data.low, "fill": "tonexty", "fillcolor": "rgba(31,119,180,0.35)"},
            {"type": "scatter", "x": x, "y": data.mean, "yaxis": yaxis, "mode": "lines",
             "showlegend": False, "line": {"width": 1, "color": "#1f77b4"},
             "customdata": custom, "name": plot_text(name),
             "hovertemplate": (f"{plot_text(name)} · tokens %{{customdata[0]}}–"
                               "%{customdata[1]}<br>mean %{y:.4g} · min %{customdata[2]:.4g}"
                               " · max %{customdata[3]:.4g}<extra></extra>")}]


MAX_HIT_MARKS = 300  # an SVG element each; beyond this, dots say no more than the band


def _hits(values: np.ndarray, positions: np.ndarray, yaxis: str, name: str) -> dict:
    shown = positions[:: max(1, -(-len(positions) // MAX_HIT_MARKS))]
    return {"type": "scatter", "x": shown, "y": np.asarray(values)[shown], "yaxis": yaxis,
            "mode": "markers", "showlegend": False,
            "marker": {"size": 6, "color": "#d62728", "symbol": "diamond"},
            "hovertemplate": f"#%{{x}} {plot_text(name)} = %{{y:.4g}} (past the threshold)"
                             "<extra></extra>"}


def _decorations(n: int, window: tuple[int, int], marks: list[tuple[int, str]],
                 rows: int) -> dict:
    shapes = [{"type": "rect", "xref": "x", "yref": "paper", "x0": window[0] - 0.5,
               "x1": window[1] - 0.5, "y0": 0, "y1": 1, "fillcolor": _WINDOW_FILL,
               "line": {"width": 1, "color": "rgba(255,152,0,0.9)"}, "layer": "below"}]
    notes = []
    for position, label in marks:
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": position,
                       "x1": position, "y0": 0, "y1": 1,
                       "line": {"width": 1, "dash": "dot", "color": "#2ca02c"}})
        notes.append({"x": position, "y": 1, "xref": "x", "yref": "paper", "yanchor": "bottom",
                      "text": plot_text(label), "showarrow": False,
                      "font": {"size": 10, "color": "#2ca02c"}})
    return {"shapes": shapes, "annotations": notes, "height": 40 + ROW_PX * rows,
            "dragmode": "select", "selectdirection": "h", "hovermode": "x",
            "hoverdistance": -1, "margin": {"l": 10, "r": 10, "t": 22, "b": 28},
            "xaxis": {"range": [-0.5, max(n, 1) - 0.5], "fixedrange": True}}


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
