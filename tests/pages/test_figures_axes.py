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


def test_the_chosen_step_and_alert_steps_are_marked():
    from pages.figures.axes import mark_steps
    fig = mark_steps(go.Figure(go.Scatter(x=[0, 1, 2], y=[1, 2, 3])), step=1,
                     alert_steps=[2, 2, 0])
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    bands = [s for s in fig.layout.shapes if s.type == "rect"]
    assert [(s.x0, s.x1) for s in lines] == [(1, 1)]
    assert sorted((s.x0, s.x1) for s in bands) == [(-0.5, 0.5), (1.5, 2.5)]
