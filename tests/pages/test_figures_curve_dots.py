"""The Rewards page's curves are Vega-Lite canvases, a dot a step only on a short run."""
import numpy as np
import pandas as pd

from loaders import schema as S
from pages.figures import rewards
from pages.figures.curve_points import MARKERS_UP_TO


def test_a_reward_curve_is_a_canvas_with_dots_only_for_a_short_run():
    """The Rewards page's curves are Vega-Lite on a canvas (no SVG mark a point), each
    step's dot drawn only up to MARKERS_UP_TO steps."""
    for steps, dots in ((50, True), (MARKERS_UP_TO + 500, False)):
        index = np.arange(steps)
        stats = {S.stat(S.REWARD, "mean"): np.linspace(0, 1, steps),
                 S.stat(S.REWARD, "std"): np.full(steps, 0.1)}
        chart = rewards.step_curve(pd.DataFrame(stats, index=index), S.REWARD, band_k=1.0)
        assert chart.spec["usermeta"]["embedOptions"]["renderer"] == "canvas"
        lines = [layer for layer in chart.spec["layer"] if layer["mark"]["type"] == "line"]
        assert lines[-1]["mark"]["point"] is dots, steps
