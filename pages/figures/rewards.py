"""Pure builders of the Rewards page: step curves with std bands, and one step's rewards.

Every curve is drawn from the per-step aggregates (Run.step_stats), so the browser gets one
point per step and per curve, never one point per sample.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from loaders import schema as S
from pages.figures.axes import integer_steps
from pages.figures.smoothing import add_band, add_curve, column_values, first_value, has_data, where

RL_COLOR, REF_COLOR, WIN_COLOR = "#1f77b4", "#ff7f0e", "#9467bd"
VALID_COLOR, REF_VALID_COLOR = "#2ca02c", "#d62728"
GAIN_COLOR, LOSS_COLOR, EVEN_COLOR = "#2ca02c", "#d62728", "#9e9e9e"
HIST_OPACITY = 0.55


def _samples_note(stats: pd.DataFrame) -> str:
    counts = column_values(stats, S.SAMPLES)
    counts = counts[np.isfinite(counts)]
    if not counts.size:
        return "each step's samples"
    low, high = int(counts.min()), int(counts.max())
    return f"{low} samples per step" if low == high else f"{low}–{high} samples per step"


def curve_note(stats: pd.DataFrame, band_k: float, smoothing: float, zero_shift: bool) -> str:
    """What a step chart shows, for its title: the aggregate, the band, EMA and shift."""
    what = f"mean ± {band_k:g}·std" if band_k > 0 else "mean"
    parts = [f"{what} over {_samples_note(stats)}"]
    if smoothing > 0:
        parts.append(f"EMA {smoothing:g}, raw faint")
    if zero_shift:
        parts.append("each curve shifted to start at 0")
    return "(" + "; ".join(parts) + ")"


def _layout(fig: go.Figure, title: str, y_title: str, steps: pd.Index) -> None:
    fig.update_layout(title=title, xaxis_title=S.STEP, yaxis_title=y_title, hovermode="x unified",
                      legend={"orientation": "h", "y": -0.2})
    integer_steps(fig, steps)


def _add_mean(fig: go.Figure, stats: pd.DataFrame, column: str, color: str, smoothing: float,
              zero_shift: bool, dash: str | None = None) -> None:
    y = column_values(stats, S.stat(column, "mean"))
    add_curve(fig, stats.index.to_numpy(), y, name=f"{column} mean", color=color,
              smoothing=smoothing, offset=first_value(y) if zero_shift else 0.0, dash=dash)


def step_curve(stats: pd.DataFrame, column: str, *, band_k: float = 1.0, smoothing: float = 0.0,
               zero_shift: bool = False, ref_column: str | None = None,
               title: str = "") -> go.Figure:
    """Per-step mean of a summary column with a ±k·std band, optionally against a reference."""
    x = stats.index.to_numpy()
    mean = column_values(stats, S.stat(column, "mean"))
    offset = first_value(mean) if zero_shift else 0.0
    fig = go.Figure()
    if band_k > 0:
        add_band(fig, x, mean, column_values(stats, S.stat(column, "std")), k=band_k,
                 name=f"{column} ± {band_k:g}·std", color=RL_COLOR, smoothing=smoothing,
                 offset=offset)
    add_curve(fig, x, mean, name=f"{column} mean", color=RL_COLOR, smoothing=smoothing,
              offset=offset)
    if ref_column and has_data(stats, ref_column):
        _add_mean(fig, stats, ref_column, REF_COLOR, smoothing, zero_shift, dash="dash")
    note = curve_note(stats, band_k, smoothing, zero_shift)
    _layout(fig, f"{title or column} {note}", title or column, stats.index)
    return fig


def reward_curves(stats: pd.DataFrame, *, band_k: float = 1.0, smoothing: float = 0.0,
                  zero_shift: bool = False) -> go.Figure:
    """Reward with its band against ref_reward, plus the valid rewards when they were logged."""
    fig = step_curve(stats, S.REWARD, band_k=band_k, smoothing=smoothing, zero_shift=zero_shift,
                     ref_column=S.REF_REWARD, title=S.REWARD)
    for column, color, dash in ((S.VALID_REWARD, VALID_COLOR, None),
                                (S.REF_VALID_REWARD, REF_VALID_COLOR, "dash")):
        if has_data(stats, column):
            _add_mean(fig, stats, column, color, smoothing, zero_shift, dash=dash)
    return fig


def win_rate_axis(fig: go.Figure, row: int | None = None, col: int | None = None) -> None:
    """A share axis in percent with the 50% line: above it RL beats the reference."""
    fig.update_yaxes(tickformat=".0%", range=[-0.02, 1.02], **where(row, col))
    fig.add_hline(y=0.5, line_dash="dot", line_color="grey", annotation_text="50%",
                  **where(row, col))


def win_rate_curve(stats: pd.DataFrame, smoothing: float = 0.0) -> go.Figure:
    """Win rate wins / (wins + losses) against the reference, with the tie and loss shares
    of all pairs beside it: with discrete rewards many pairs tie, and a tie is no loss."""
    fig = go.Figure()
    x = stats.index.to_numpy()
    add_curve(fig, x, column_values(stats, S.WIN_RATE), name="win rate (ties excluded)",
              color=WIN_COLOR, smoothing=smoothing)
    for column, name, color in ((S.TIE_SHARE, "tie share", EVEN_COLOR),
                                (S.LOSS_SHARE, "loss share", LOSS_COLOR)):
        values = column_values(stats, column)
        if np.isfinite(values).any():
            add_curve(fig, x, values, name=name, color=color, smoothing=smoothing, dash="dot")
    win_rate_axis(fig)
    ema_note = f"; EMA {smoothing:g}, raw faint" if smoothing > 0 else ""
    _layout(fig, f"win rate = wins / (wins + losses) of {S.REWARD} vs {S.REF_REWARD}; ties "
                 f"beside it ({_samples_note(stats)}{ema_note})", "share", stats.index)
    return fig


def histogram_columns(rows: pd.DataFrame) -> list[str]:
    """The columns reward_histogram draws, in its traces' order."""
    return [c for c in (S.REWARD, S.REF_REWARD) if np.isfinite(column_values(rows, c)).any()]


def reward_histogram(rows: pd.DataFrame, bins: int = 30) -> go.Figure:
    """reward and ref_reward counts on shared bin edges, so the two bars line up."""
    series = {c: column_values(rows, c) for c in (S.REWARD, S.REF_REWARD)}
    series = {c: v[np.isfinite(v)] for c, v in series.items() if np.isfinite(v).any()}
    fig = go.Figure()
    if not series:
        fig.add_annotation(text="no finite rewards at this step", showarrow=False)
        return fig
    edges = np.histogram_bin_edges(np.concatenate(list(series.values())), bins=bins)
    bounds = np.column_stack([edges[:-1], edges[1:]])
    for column, values in series.items():
        counts, _ = np.histogram(values, bins=edges)
        fig.add_trace(go.Bar(x=(edges[:-1] + edges[1:]) / 2, y=counts, width=np.diff(edges),
                             name=f"{column} ({values.size})", opacity=HIST_OPACITY,
                             marker_color=RL_COLOR if column == S.REWARD else REF_COLOR,
                             customdata=bounds, hovertemplate="[%{customdata[0]:.4g}, "
                             "%{customdata[1]:.4g}]: %{y} samples<extra></extra>"))
    shown = " vs ".join(series)  # a dump without ref_reward draws, and names, reward alone
    fig.update_layout(barmode="overlay", bargap=0, xaxis_title=S.REWARD, yaxis_title="samples",
                      title=f"{shown} distribution ({bins} bins"
                            f"{' on shared edges' if len(series) > 1 else ''}; counts of samples)")
    return fig


def selected_step(event_points: list[dict]) -> int | None:
    """The step a chart click picked: the first selected point's x, rounded to a step."""
    if not event_points:
        return None
    try:
        x = float(event_points[0].get("x"))
    except (TypeError, ValueError):
        return None
    return int(round(x)) if np.isfinite(x) else None
