"""pages.figures.axes: step axes tick on whole steps."""
import plotly.graph_objects as go

from pages.figures.axes import integer_steps


def test_a_short_run_gets_one_tick_per_step():
    fig = integer_steps(go.Figure(go.Scatter(x=[3, 4, 5], y=[1, 2, 3])), [3, 4, 5])
    assert fig.layout.xaxis.dtick == 1 and fig.layout.xaxis.tick0 == 3
    assert fig.layout.xaxis.tickformat == "d"


def test_a_long_run_keeps_automatic_integer_ticks():
    fig = integer_steps(go.Figure(), range(0, 500, 5))
    assert fig.layout.xaxis.dtick is None and fig.layout.xaxis.tickformat == "d"


def test_no_finite_step_leaves_the_axis_automatic():
    fig = integer_steps(go.Figure(), [float("nan")])
    assert fig.layout.xaxis.dtick is None
