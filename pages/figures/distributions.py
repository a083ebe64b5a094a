"""Pure builders of one step's reward distributions that stay readable at 8,192 samples:
quantile curves and bins, never one mark per sample."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from loaders import schema as S
from pages.figures.groups import KIND_COLORS
from pages.figures.rewards import GAIN_COLOR, LOSS_COLOR, REF_COLOR, RL_COLOR
from pages.figures.smoothing import column_values

POINTS = 256  # quantiles drawn per curve, whatever the number of samples


def _finite(rows: pd.DataFrame, column: str) -> np.ndarray:
    values = column_values(rows, column)
    return np.sort(values[np.isfinite(values)])


def quantile_curve(values: np.ndarray, points: int = POINTS) -> tuple[np.ndarray, np.ndarray]:
    """(share, value) at most `points` evenly spaced quantiles of sorted values, always
    with the minimum and the maximum, so a lone extreme sample stays on the curve."""
    if values.size <= points:
        return (np.arange(1, values.size + 1) / max(values.size, 1)), values
    share = np.linspace(0.0, 1.0, points)
    return share, np.quantile(values, share)


def reward_ecdf(rows: pd.DataFrame) -> go.Figure:
    """Cumulative share of samples at or below each reward, RL against the reference."""
    fig = go.Figure()
    for column, color in ((S.REWARD, RL_COLOR), (S.REF_REWARD, REF_COLOR)):
        values = _finite(rows, column)
        if values.size:
            share, x = quantile_curve(values)
            fig.add_trace(go.Scatter(x=x, y=share, name=f"{column} ({values.size})",
                                     mode="lines", line={"color": color, "shape": "hv"},
                                     hovertemplate="%{y:.0%} of samples ≤ %{x:.4g}<extra></extra>"))
    fig.update_layout(title=f"ECDF of {S.REWARD} (further right is better)",
                      xaxis_title=S.REWARD, yaxis={"title": "share of samples", "range": [0, 1]},
                      legend={"orientation": "h", "y": -0.25}, height=340)
    return fig


def gap_counts(gap: np.ndarray) -> dict[str, int]:
    return {"ahead": int((gap > 0).sum()), "tied": int((gap == 0).sum()),
            "behind": int((gap < 0).sum())}


def reward_gap_curve(rows: pd.DataFrame) -> go.Figure | None:
    """reward − ref_reward of every sample sorted, as a quantile curve filled green above
    zero and red below; None when no sample has both rewards."""
    gap = _finite(rows, S.REWARD_GAP)
    if not gap.size:
        return None
    share, y = quantile_curve(gap)
    fig = go.Figure()
    for part, color, name in ((np.maximum(y, 0), GAIN_COLOR, "RL ahead"),
                              (np.minimum(y, 0), LOSS_COLOR, "RL behind")):
        fig.add_trace(go.Scatter(x=share, y=part, fill="tozeroy", mode="lines", name=name,
                                 line={"color": color, "width": 1}, hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=share, y=y, mode="lines", name=S.REWARD_GAP,
                             line={"color": "#333", "width": 1},
                             hovertemplate="%{x:.0%} of samples: gap ≤ %{y:+.4g}<extra></extra>"))
    n = gap_counts(gap)
    fig.update_layout(title=f"{S.REWARD_GAP} sorted: ahead {n['ahead']}, tied {n['tied']}, "
                            f"behind {n['behind']} of {gap.size}", showlegend=False,
                      xaxis={"title": "share of samples (sorted by gap)", "tickformat": ".0%"},
                      yaxis_title=f"{S.REWARD} − {S.REF_REWARD}", height=340)
    return fig


def group_means(table: pd.DataFrame, bins: int = 20) -> go.Figure:
    """Histogram of the groups' reward means, stacked by kind (solved / mixed / unsolved)."""
    means = table[S.stat(S.REWARD, "mean")].to_numpy(dtype=np.float64)
    finite = np.isfinite(means)
    fig = go.Figure()
    if not finite.any():
        return fig
    edges = np.histogram_bin_edges(means[finite], bins=bins)
    for kind in ("solved", "mixed", "unsolved"):
        chosen = means[finite & (table[S.GROUP_KIND] == kind).to_numpy()]
        counts, _ = np.histogram(chosen, bins=edges)
        fig.add_trace(go.Bar(x=(edges[:-1] + edges[1:]) / 2, y=counts, width=np.diff(edges),
                             name=f"{kind} ({chosen.size})", marker_color=KIND_COLORS[kind]))
    fig.update_layout(barmode="stack", bargap=0.02, height=340,
                      title=f"Group reward means ({len(table)} groups)",
                      xaxis_title="group reward mean", yaxis_title="groups",
                      legend={"orientation": "h", "y": -0.25})
    return fig
