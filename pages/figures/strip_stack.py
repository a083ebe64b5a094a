"""The Sample page's token strips stacked as one Vega-Lite chart, with one brush across them.

Four strips drawn as four charts cost a fresh browser four Vega views to parse, run and lay
out; as one chart of four views they took 0.13 s less of the renderer's main thread on a page
of the strips alone (docs/benchmarks.md, session 21), and a caption each less on the page.
Each view keeps its strip's layers and reads its rows of the shared data by the strip's
number; the brush is one selection over every view's band (a drag on any strip moves the
window).  A metric's name is its view's title, drawn on the canvas as text: it is never
part of an expression (the filter is by number).
"""
from __future__ import annotations

import pandas as pd

from pages.figures.token_strip import BRUSH, Strip
from pages.figures.vega import CANVAS

STRIP = "strip"  # the data's column: which strip a row belongs to
PLOT_PX = 50  # a strip's plot (its axis and title come on top)
_BAND = 1  # the band layer of token_strip's strip spec: the brush is drawn over it


def stacked(strips: list[Strip]) -> tuple[pd.DataFrame, dict]:
    """(data, spec) of one chart drawing `strips` top to bottom, brushed as one."""
    data = pd.concat([strip.data.assign(**{STRIP: i}) for i, strip in enumerate(strips)],
                     ignore_index=True)
    views = [_view(i, strip) for i, strip in enumerate(strips)]
    brush = {"name": BRUSH, "select": {"type": "interval", "encodings": ["x"]},
             "views": [_band_name(i) for i in range(len(strips))]}
    spec = {"vconcat": views, "params": [brush], "spacing": 14,
            # fit the container's width: a vconcat of layers is otherwise laid out at its
            # plots' width plus the axes, wider than the page
            "autosize": {"type": "fit-x", "contains": "padding"},
            **CANVAS}
    return data, spec


def _view(i: int, strip: Strip) -> dict:
    layers = [dict(layer) for layer in strip.spec["layer"]]
    band = {key: value for key, value in layers[_BAND].items() if key != "params"}
    layers[_BAND] = {**band, "name": _band_name(i)}
    return {"title": {"text": strip.name, "anchor": "start", "fontSize": 12,
                      "fontWeight": "normal"},
            "height": PLOT_PX, "transform": [{"filter": {"field": STRIP, "equal": i}}],
            "layer": layers}


def _band_name(i: int) -> str:
    return f"band_{i}"  # not view_N: Streamlit renames Altair's view_N counters
