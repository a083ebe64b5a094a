"""Line traces drawn as SVG or WebGL by their size.

A WebGL trace starts a GL context per chart: in a browser without a GPU (headless, many
remote desktops) that is software GL, hundreds of ms to start and one of a dozen or so a page
may hold, for nothing on a curve of a few hundred steps.  Past SVG_POINTS points, SVG's one
node a marker costs more and WebGL wins.
"""
from __future__ import annotations

from collections.abc import Sized

import plotly.graph_objects as go

SVG_POINTS = 2000
# few points get markers, so an isolated value stays visible; past this many a marker is an
# SVG node each for nothing the line does not show (1,000 steps x 6 curves: 6,000 nodes)
MARKERS_UP_TO = 300


def kind(x: Sized) -> str:
    """The trace type for a curve of len(x) points."""
    return "scatter" if len(x) <= SVG_POINTS else "scattergl"


def line_mode(x: Sized) -> str:
    """"lines+markers" for a curve of up to MARKERS_UP_TO points, else "lines"."""
    return "lines+markers" if len(x) <= MARKERS_UP_TO else "lines"


def line(x: Sized, **kwargs: object) -> go.Scatter | go.Scattergl:
    """go.Scatter(x=x, ...) up to SVG_POINTS points, else go.Scattergl."""
    cls = go.Scatter if kind(x) == "scatter" else go.Scattergl
    return cls(x=x, **kwargs)
