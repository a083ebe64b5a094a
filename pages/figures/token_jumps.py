"""The Sample page's jump list: its top tokens (or those past a threshold) as a bar chart
whose bars move the window.

A Vega-Lite chart, not a data grid: the strips already load Vega, and the grid's script
cost a fresh Sample page about half a second of its first paint (docs/benchmarks.md,
session 27).  A bar's label is its token's position and text, its length the value, and
the hover adds the tokens around it.  Token texts are data drawn on a canvas: never markup,
never part of an expression.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from pages.figures.token_top import Ranking
from pages.figures.vega import CANVAS

JUMP = "jump"  # the click selection's name: Streamlit reports it under this key
RANK, LABEL, LENGTH, VALUE = "rank", "label", "length", "value"
ROW_PX = 20  # a bar and its gap
_BAR, _PICKED = "#9ecae1", "#fd8d3c"


def jump_chart(table: pd.DataFrame, ranking: Ranking) -> tuple[pd.DataFrame, dict]:
    """(data, spec) of one bar a row of `table` (token_top.token_rows: position, token,
    the ranking's metric, context), in its order; a click on a bar selects its rank.

    A bar is as long as what the ranking sorts by (|log_ratio| for "|log_ratio|"), and
    its number is the token's own value, sign and all."""
    column = ranking.column
    values = table[column].to_numpy(dtype=np.float64)
    length = _length(values, ranking)
    data = pd.DataFrame({RANK: np.arange(len(table)),
                         LABEL: [f"{p} ⟦{t}⟧" for p, t in zip(table["position"].tolist(),
                                                            table["token"].tolist())],
                         LENGTH: length, VALUE: values, "position": table["position"].to_numpy(),
                         "token": table["token"].to_numpy(), "context": table["context"]})
    y = {"field": LABEL, "type": "nominal", "sort": None,  # the table's order
         "axis": {"title": None, "labelLimit": 260, "labelFontSize": 11,
                  "labelOverlap": False}}
    x = {"field": LENGTH, "type": "quantitative",
         "title": ranking.label if ranking.magnitude or ranking.log_magnitude else column,
         "scale": {"domain": _domain(length), "nice": False}}
    picked = {"condition": {"param": JUMP, "value": _PICKED, "empty": False}, "value": _BAR}
    tooltip = [{"field": "position", "type": "quantitative", "format": "d"},
               {"field": "token", "type": "nominal"},
               {"field": VALUE, "type": "quantitative", "title": column, "format": ".4g"},
               {"field": "context", "type": "nominal"}]
    spec = {"height": ROW_PX * max(1, len(table)),
            "encoding": {"y": y},
            "layer": [
                {"params": [{"name": JUMP, "select": {"type": "point", "fields": [RANK],
                                                      "on": "click", "clear": "dblclick"}}],
                 "mark": {"type": "bar", "cursor": "pointer"},
                 "encoding": {"x": x, "color": picked, "tooltip": tooltip}},
                {"mark": {"type": "text", "align": "left", "dx": 4, "fontSize": 11},
                 "encoding": {"x": x, "text": {"field": VALUE, "format": ".4g"},
                              "tooltip": tooltip}}],
            **CANVAS}
    return data, spec


def _length(values: np.ndarray, ranking: Ranking) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        if ranking.log_magnitude:
            return np.abs(np.log(values))
        return np.abs(values) if ranking.magnitude else values


def _domain(values: np.ndarray) -> list[float]:
    """Zero and the values, with a quarter more room on the right for each bar's number."""
    finite = values[np.isfinite(values)]
    low = min(0.0, float(finite.min())) if len(finite) else 0.0
    high = max(0.0, float(finite.max())) if len(finite) else 1.0
    span = (high - low) or 1.0
    return [low, high + span / 4]


def rank_of_pick(selection: dict) -> int | None:
    """The rank of the bar a click picked (`{"jump": [{"rank": 3}]}`); None when none."""
    picked = selection.get(JUMP) or []
    try:
        rank = float(picked[0][RANK]) if picked else math.nan
    except (KeyError, TypeError, ValueError):
        return None
    return int(rank) if math.isfinite(rank) and rank >= 0 else None
