"""A ranked list drawn as bars a click picks: the Sample page's top tokens (a bar moves the
window), the Tokens page's hottest token strings (a bar opens its sample) and the prompts
RL never beat on RL vs reference (a bar lists the prompt's samples).

A Vega-Lite chart, not a data grid: a page that draws Vega anyway then loads no grid
script, which cost a fresh page about half a second of its first paint (docs/benchmarks.md,
session 27).  A bar's label is data drawn on a canvas (a token's text from the model):
never markup, never part of an expression.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from pages.figures.vega import CANVAS

PICK = "bar"  # the click selection's name: Streamlit reports it under this key
RANK, LABEL, LENGTH, VALUE = "rank", "label", "length", "value"  # columns of a bar list
ROW_PX = 20  # a bar and its gap: the plot is as tall as its bars need
_BAR, _PICKED = "#9ecae1", "#fd8d3c"


def bar_list(data: pd.DataFrame, x_title: str, tooltip: list[dict]) -> dict:
    """The spec of one bar a row of `data` (its columns LABEL, LENGTH, VALUE and RANK =
    0..n-1), top to bottom in its order, each with its VALUE as a number at its end."""
    y = {"field": LABEL, "type": "nominal", "sort": None,  # the list's own order
         "axis": {"title": None, "labelLimit": 260, "labelFontSize": 11,
                  "labelOverlap": False}}
    x = {"field": LENGTH, "type": "quantitative", "title": x_title,
         "scale": {"domain": _domain(data[LENGTH].to_numpy(dtype=np.float64)),
                   "nice": False}}
    picked = {"condition": {"param": PICK, "value": _PICKED, "empty": False}, "value": _BAR}
    return {"height": {"step": ROW_PX},
            "encoding": {"y": y},
            "layer": [
                {"params": [{"name": PICK, "select": {"type": "point", "fields": [RANK],
                                                      "on": "click", "clear": "dblclick"}}],
                 "mark": {"type": "bar", "cursor": "pointer"},
                 "encoding": {"x": x, "color": picked, "tooltip": tooltip}},
                {"mark": {"type": "text", "align": "left", "dx": 4, "fontSize": 11},
                 "encoding": {"x": x, "text": {"field": VALUE, "format": ".4g"},
                              "tooltip": tooltip}}],
            **CANVAS}


def _domain(lengths: np.ndarray) -> list[float]:
    """Zero and the lengths, with a quarter more room on the right for each bar's number."""
    finite = lengths[np.isfinite(lengths)]
    low = min(0.0, float(finite.min())) if len(finite) else 0.0
    high = max(0.0, float(finite.max())) if len(finite) else 1.0
    return [low, high + ((high - low) or 1.0) / 4]


def rank_of_pick(selection: dict) -> int | None:
    """The rank of the bar a click picked (`{"bar": [{"rank": 3}]}`); None when none."""
    picked = selection.get(PICK) or []
    try:
        rank = float(picked[0][RANK]) if picked else math.nan
    except (KeyError, TypeError, ValueError):
        return None
    return int(rank) if math.isfinite(rank) and rank >= 0 else None
