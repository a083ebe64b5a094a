"""Pure builders of the Rewards page's reward-components views (data -> figure), and the
bin a click on a histogram picked."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from loaders import schema as S
from pages.figures import traces
from pages.figures.axes import integer_steps
from pages.figures.rewards import HIST_OPACITY
from pages.figures.smoothing import column_values


def components_figure(table: pd.DataFrame, names: list[str], add_up: bool) -> go.Figure:
    """Each component's mean per step, stacked when they add up to the reward (its make-up),
    else one line each; the reward's mean as a line over them."""
    fig = go.Figure()
    steps = table.index.to_numpy()
    for name in names:
        fig.add_trace(traces.line(steps, y=table[name].to_numpy(), name=name,
                                  mode=traces.line_mode(table),
                                  stackgroup="parts" if add_up else None))
    fig.add_trace(traces.line(steps, y=table[S.REWARD].to_numpy(), name="reward (mean)",
                              mode=traces.line_mode(table), line={"dash": "dot",
                                                                  "color": "black"}))
    how = "stacked: they add up to the reward" if add_up else "they do not add up to the reward"
    fig.update_layout(title=f"reward components, mean per step ({how})", height=360,
                      margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      legend={"orientation": "h", "y": -0.2})
    return integer_steps(fig, table.index)


def component_histogram(rows: pd.DataFrame, name: str, bins: int = 30) -> go.Figure:
    """One component's counts at a step; each bar carries its bounds (a click filters the
    Responses table to them)."""
    values = column_values(rows, name)
    values = values[np.isfinite(values)]
    fig = go.Figure()
    if not values.size:
        fig.add_annotation(text=f"no {name} at this step", showarrow=False)
        return fig
    edges = np.histogram_bin_edges(values, bins=bins)
    counts, _ = np.histogram(values, bins=edges)
    bounds = np.column_stack([edges[:-1], edges[1:]])
    fig.add_trace(go.Bar(x=(edges[:-1] + edges[1:]) / 2, y=counts, width=np.diff(edges),
                         name=name, opacity=HIST_OPACITY, customdata=bounds,
                         hovertemplate="[%{customdata[0]:.4g}, %{customdata[1]:.4g}]: %{y} "
                                       "samples<extra></extra>"))
    fig.update_layout(title=f"{name} ({values.size} samples; click a bar for its samples)",
                      xaxis_title=name, yaxis_title="samples", bargap=0,
                      margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig


def picked_bin(points: list[dict], names: list[str]) -> tuple[str, float, float] | None:
    """(column, low, high) of the histogram bar a click selected: its trace's column and
    the bounds the bar carries; None when nothing (or no bar) was picked."""
    for point in points:
        bounds = point.get("customdata")
        if isinstance(bounds, dict):  # the browser sends an array's items by index
            bounds = [bounds.get("0"), bounds.get("1")]
        number = point.get("curve_number", point.get("curveNumber"))
        if isinstance(bounds, list) and len(bounds) == 2 and None not in bounds \
                and number is not None and 0 <= int(number) < len(names):
            return names[int(number)], float(bounds[0]), float(bounds[1])
    return None
