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


def kind(x: Sized) -> str:
    """The trace type for a curve of len(x) points."""
    return "scatter" if len(x) <= SVG_POINTS else "scattergl"


def line(x: Sized, **kwargs: object) -> go.Scatter | go.Scattergl:
    """go.Scatter(x=x, ...) up to SVG_POINTS points, else go.Scattergl."""
    cls = go.Scatter if kind(x) == "scatter" else go.Scattergl
    return cls(x=x, **kwargs)
