"""Pure builders of the Tokens page: a token metric by position bin (x) and step (y), and the
step's hottest token strings as a table."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from pages.figures.text import plot_text
from pages.figures.token_text import shown_token, token_style

# where lower is "hotter" the colours are flipped so the eye always goes to the red
_LOW_IS_HOT = ("logprob",)


def bin_labels(starts: list[float], relative: bool, abs_tokens: int = 512) -> list[str]:
    """'0–3 %' for relative bins, '0–511' for absolute ones."""
    if relative:
        step = 100 / max(1, len(starts))
        return [f"{i * step:.0f}–{(i + 1) * step:.0f} %" for i in range(len(starts))]
    return [f"{int(s)}–{int(s) + abs_tokens - 1}" for s in starts]


def position_step_figure(steps: list[int], labels: list[str], means: np.ndarray,
                         tokens: np.ndarray, metric: str, step: int | None) -> go.Figure:
    """One heatmap (one trace whatever the steps); hover shows the bin, mean and token
    count; the chosen step is outlined."""
    name = plot_text(metric)
    fig = go.Figure(go.Heatmap(
        z=means, x=labels, y=steps, customdata=tokens, colorscale="RdBu_r",
        reversescale=metric in _LOW_IS_HOT, colorbar={"title": {"text": name}},
        hovertemplate=(f"step %{{y}} · position %{{x}}<br>{name} mean %{{z:.4g}}"
                       "<br>%{customdata:,.0f} tokens<extra></extra>")))
    if step is not None and step in steps:
        fig.add_shape(type="rect", xref="paper", x0=0, x1=1, y0=step - 0.5, y1=step + 0.5,
                      line={"color": "#111", "width": 1.5})
    fig.update_layout(height=min(900, 160 + 5 * len(steps)),
                      margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      title=f"{name} by position (x) and step (y)",
                      xaxis={"title": "position in the response", "type": "category"},
                      yaxis={"title": "step", "autorange": "reversed"})
    return fig


def step_of_click(points: list[dict]) -> int | None:
    """The step of a clicked heatmap cell."""
    if not points or points[0].get("y") is None:
        return None
    return int(points[0]["y"])


def hot_table(table: pd.DataFrame) -> pd.DataFrame:
    """The hottest tokens with their pieces decoded and whitespace made visible."""
    style = token_style(table["token"].tolist())
    return table.assign(token=[shown_token(t, style) for t in table["token"]])
