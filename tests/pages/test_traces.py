"""pages.figures.traces: a Plotly curve is SVG up to SVG_POINTS points, WebGL past them;
the Rewards page's curves are Vega-Lite canvases."""
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from loaders import schema as S
from pages.figures import rewards, traces


def test_the_trace_type_follows_the_point_count():
    short, long = np.arange(traces.SVG_POINTS), np.arange(traces.SVG_POINTS + 1)
    assert traces.kind(short) == "scatter" and traces.kind(long) == "scattergl"
    assert type(traces.line(short, y=short)) is go.Scatter
    assert type(traces.line(long, y=long, mode="lines")) is go.Scattergl


def test_a_reward_curve_is_a_canvas_with_dots_only_for_a_short_run():
    """The Rewards page's curves are Vega-Lite on a canvas (no SVG mark a point), each
    step's dot drawn only up to MARKERS_UP_TO steps."""
    for steps, dots in ((50, True), (traces.MARKERS_UP_TO + 500, False)):
        index = np.arange(steps)
        stats = {S.stat(S.REWARD, "mean"): np.linspace(0, 1, steps),
                 S.stat(S.REWARD, "std"): np.full(steps, 0.1)}
        chart = rewards.step_curve(pd.DataFrame(stats, index=index), S.REWARD, band_k=1.0)
        assert chart.spec["usermeta"]["embedOptions"]["renderer"] == "canvas"
        lines = [layer for layer in chart.spec["layer"] if layer["mark"]["type"] == "line"]
        assert lines[-1]["mark"]["point"] is dots, steps
