"""Pure builders of the Health page's latency panel (data -> figure)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from loaders.health.latency import PARTS, latency_columns, time_of
from pages.figures.rewards import HIST_OPACITY


def latency_histogram(rows: pd.DataFrame, step: int, bins: int = 40) -> go.Figure:
    """The step's request times and their parts on shared bins (seconds)."""
    series = {"request time": time_of(rows)}
    series.update({part: rows[part].astype(float) for part in PARTS
                   if part in latency_columns(rows)})
    series = {k: v.dropna().to_numpy() for k, v in series.items() if v is not None}
    series = {k: v for k, v in series.items() if v.size}
    fig = go.Figure()
    if not series:
        fig.add_annotation(text="no request times at this step", showarrow=False)
        return fig
    edges = np.histogram_bin_edges(np.concatenate(list(series.values())), bins=bins)
    for name, values in series.items():
        counts, _ = np.histogram(values, bins=edges)
        fig.add_trace(go.Bar(x=(edges[:-1] + edges[1:]) / 2, y=counts, width=np.diff(edges),
                             name=f"{name} ({values.size})", opacity=HIST_OPACITY))
    fig.update_layout(barmode="overlay", bargap=0, height=320, xaxis_title="seconds",
                      yaxis_title="requests", title=f"step {step}: request time and its parts",
                      margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      legend={"orientation": "h", "y": -0.3})
    return fig


def tokens_time_figure(binned: tuple[np.ndarray, np.ndarray, np.ndarray], step: int
                       ) -> go.Figure:
    """Response tokens against request time as a binned count map."""
    counts, n_edges, t_edges = binned
    fig = go.Figure(go.Heatmap(z=counts.T, x=(n_edges[:-1] + n_edges[1:]) / 2,
                               y=(t_edges[:-1] + t_edges[1:]) / 2, colorscale="Blues",
                               hovertemplate="%{x:.0f} tokens, %{y:.3g} s: %{z} requests"
                                             "<extra></extra>"))
    fig.update_layout(title=f"step {step}: response tokens vs request time", height=320,
                      xaxis_title="response tokens", yaxis_title="seconds",
                      margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig
