"""Pure builders of the Health page's policy-lag panel (data -> figure)."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from loaders.health.staleness import FACTS, MIXED
from pages.figures import traces
from pages.figures.axes import integer_steps


def lag_figure(table: pd.DataFrame) -> go.Figure:
    """Per step: the share of samples at each policy lag (stacked), the lag's mean and max,
    and the share of samples whose generation spanned several policy versions."""
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        row_heights=[0.5, 0.3, 0.2],
                        subplot_titles=["share of samples by policy lag",
                                        "policy lag (updates behind the trained step)", MIXED])
    steps = table.index.to_numpy()
    for label in (c for c in table.columns if c not in FACTS):
        fig.add_trace(go.Bar(x=steps, y=table[label].to_numpy(), name=f"lag {label}",
                             hovertemplate="step %{x}: %{y:.1%}<extra>lag " + label + "</extra>"),
                      row=1, col=1)
    for name in ("lag mean", "lag max"):
        fig.add_trace(traces.line(steps, y=table[name].to_numpy(), mode=traces.line_mode(table),
                                  name=name), row=2, col=1)
    fig.add_trace(traces.line(steps, y=table[MIXED].to_numpy(), mode=traces.line_mode(table),
                              name=MIXED), row=3, col=1)
    fig.update_layout(barmode="stack", bargap=0, height=560, title="policy lag (async RL)",
                      margin={"l": 10, "r": 10, "t": 60, "b": 10},
                      legend={"orientation": "h", "y": -0.12})
    fig.update_yaxes(tickformat=".0%", row=1, col=1)
    fig.update_yaxes(tickformat=".0%", row=3, col=1)
    return integer_steps(fig, table.index)


def by_lag_figure(table: pd.DataFrame, metric: str, step: int) -> go.Figure:
    """One step's samples by lag: how many (bars), and a metric's mean (line)."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    labels = [str(x) for x in table.index]
    fig.add_trace(go.Bar(x=labels, y=table["samples"].to_numpy(), name="samples",
                         opacity=0.5), secondary_y=False)
    if metric in table:
        fig.add_trace(go.Scatter(x=labels, y=table[metric].to_numpy(), mode="lines+markers",
                                 name=f"{metric} (mean)"), secondary_y=True)
    fig.update_layout(title=f"step {step}: samples and {metric} by policy lag", height=320,
                      margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      legend={"orientation": "h", "y": -0.3})
    fig.update_xaxes(title="policy lag", type="category")
    fig.update_yaxes(title="samples", secondary_y=False)
    fig.update_yaxes(title=metric, secondary_y=True)
    return fig
