"""What every Vega-Lite chart of the board shares: pure spec fragments.

Streamlit runs Vega with its CSP-safe expression interpreter, so whatever a spec makes Vega
evaluate once per data row is interpreted, row by row, on a fresh browser's main thread.
Two defaults of Vega-Lite cost that for nothing here:

- an ARIA description string for every mark item (eight `format` calls a heatmap cell), which
  only the SVG renderer writes out: the board draws on a canvas;
- a layer drawn from `datum` encodings alone (a rule at the chosen step, an outline) still
  takes the chart's data, and draws one mark for each of its rows.

On the Tokens heatmap of a long run (3,200 cells) these, with its x order read from a
column rather than from a 32-way formula a cell, took 0.05-0.14 s off a fresh open's main
thread (docs/benchmarks.md, session 25).
"""
from __future__ import annotations

# the top level of every spec: a canvas, and no per-item ARIA text (SVG output only)
CANVAS = {"usermeta": {"embedOptions": {"renderer": "canvas"}}, "config": {"aria": False}}
# the data of a layer drawn from `datum` encodings alone: one mark, not one per row
ONE_MARK = {"values": [{}]}


def title(text: str) -> dict:
    """A chart's title as every chart of the board has it: left, 13 px, its text drawn on
    the canvas as written (a name from the dump included)."""
    return {"text": text, "anchor": "start", "fontSize": 13}


def titled(text: str) -> dict:
    """The top level of a chart's spec: its title and CANVAS."""
    return {"title": title(text), **CANVAS}
