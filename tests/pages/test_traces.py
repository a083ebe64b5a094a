"""pages.figures.traces: a curve is SVG up to SVG_POINTS points, WebGL past them."""
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


def test_a_reward_curve_of_many_steps_is_webgl_and_of_few_svg():
    for steps, cls in ((50, go.Scatter), (traces.SVG_POINTS + 500, go.Scattergl)):
        index = np.arange(steps)
        stats = {S.stat(S.REWARD, "mean"): np.linspace(0, 1, steps),
                 S.stat(S.REWARD, "std"): np.full(steps, 0.1)}
        fig = rewards.step_curve(pd.DataFrame(stats, index=index), S.REWARD, band_k=1.0)
        assert fig.data and all(type(t) is cls for t in fig.data), steps
