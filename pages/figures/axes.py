"""Axis conventions shared by the step charts."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import plotly.graph_objects as go

FEW_STEPS = 12  # up to this span, every step gets its own tick


def integer_steps(fig: go.Figure, steps: Iterable[float]) -> go.Figure:
    """Ticks on whole steps only: one per step over a short run (plotly would put ticks at
    0.5 there), integer labels otherwise."""
    values = np.asarray(list(steps), dtype=np.float64)
    values = values[np.isfinite(values)]
    axis: dict = {"tickformat": "d"}
    if values.size and values.max() - values.min() <= FEW_STEPS:
        axis.update(tick0=float(values.min()), dtick=1)
    fig.update_xaxes(**axis)
    return fig


def mark_steps(fig: go.Figure, step: int | None = None,
               alert_steps: Iterable[int] = ()) -> go.Figure:
    """The chosen step as a grey dotted line, and the steps of strong alerts as faint red
    bands, on every x axis of a step chart."""
    for alert in sorted(set(alert_steps)):
        fig.add_vrect(x0=alert - 0.5, x1=alert + 0.5, fillcolor="#d62728", opacity=0.12,
                      line_width=0, layer="below")
    if step is not None:
        fig.add_vline(x=step, line_dash="dot", line_color="#666", line_width=1)
    return fig
