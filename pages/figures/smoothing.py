"""Smoothed step curves shared by every step chart, so all pages smooth and draw alike."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from loaders import schema as S
from pages.figures import traces
from pages.figures.text import plot_text

RAW_OPACITY = 0.3  # the unsmoothed curve under an EMA stays visible but quiet
BAND_OPACITY = 0.2


def ema(values: np.ndarray, weight: float) -> np.ndarray:
    """TensorBoard's debiased exponential moving average.

    Debiasing (dividing by 1 - weight**n) keeps the first points at the data's level instead
    of dragging them towards 0, so a smoothed curve starts where the raw curve starts.
    Non-finite inputs stay as they are at their own position and are skipped by the average,
    so one NaN step does not blank the rest of the curve.
    """
    if not 0.0 <= weight < 1.0:
        raise ValueError(f"smoothing weight must be in [0, 1), got {weight}")
    data = np.asarray(values, dtype=np.float64)
    if weight == 0.0:
        return data.copy()
    out = data.copy()
    last, count = 0.0, 0
    for i, value in enumerate(data):
        if not np.isfinite(value):
            continue
        last = last * weight + (1.0 - weight) * value
        count += 1
        out[i] = last / (1.0 - weight**count)
    return out


def column_values(frame: pd.DataFrame, column: str) -> np.ndarray:
    """A column as float64 numpy; all NaN when absent, so dumps without refs still draw."""
    if column not in frame:
        return np.full(len(frame), np.nan)
    return frame[column].to_numpy(dtype=np.float64, na_value=np.nan)


def has_data(stats: pd.DataFrame, column: str) -> bool:
    """Whether the per-step mean of a column has any finite value (optional keys often don't)."""
    return bool(np.isfinite(column_values(stats, S.stat(column, "mean"))).any())


def first_value(values: np.ndarray) -> float:
    """The first finite value: the origin of a zero-shifted curve (0 when there is none)."""
    finite = values[np.isfinite(values)]
    return float(finite[0]) if finite.size else 0.0


def where(row: int | None, col: int | None) -> dict:
    """Subplot placement for add_trace/update_yaxes; nothing for a figure without subplots."""
    return {"row": row, "col": col} if row is not None else {}


def add_curve(fig: go.Figure, x: np.ndarray, y: np.ndarray, *, name: str, color: str,
              smoothing: float = 0.0, offset: float = 0.0, dash: str | None = None,
              row: int | None = None, col: int | None = None) -> None:
    """One step curve; with smoothing the raw curve stays faint underneath the EMA."""
    y = np.asarray(y, dtype=np.float64) - offset
    line = {"color": color, "dash": dash}
    if smoothing > 0:
        fig.add_trace(traces.line(x, y=y, name=f"{plot_text(name)} (raw)", mode="lines",
                                   line=line, opacity=RAW_OPACITY, showlegend=False,
                                   hoverinfo="skip"),
                      **where(row, col))
        y = ema(y, smoothing)
    label = plot_text(name)
    fig.add_trace(traces.line(x, y=y, name=label, mode=traces.line_mode(x), line=line,
                               marker={"size": 4, "color": color},
                               hovertemplate=f"{label}: %{{y:.4g}}<extra></extra>"),
                  **where(row, col))


def add_band(fig: go.Figure, x: np.ndarray, mean: np.ndarray, std: np.ndarray, *, k: float,
             name: str, color: str, smoothing: float = 0.0, offset: float = 0.0) -> None:
    """mean ± k·std as one filled polygon (one trace); steps without a std are left out."""
    upper, lower = mean + k * std - offset, mean - k * std - offset
    if smoothing > 0:
        upper, lower = ema(upper, smoothing), ema(lower, smoothing)
    keep = np.isfinite(upper) & np.isfinite(lower)
    if not keep.any():
        return
    xs = np.concatenate([x[keep], x[keep][::-1]])
    ys = np.concatenate([upper[keep], lower[keep][::-1]])
    width = 0 if keep.sum() > 1 else 6  # a single step has no area: draw its band as a bar
    fig.add_trace(traces.line(xs, y=ys, name=name, mode="lines", fill="toself",
                               line={"color": color, "width": width}, fillcolor=color,
                               opacity=BAND_OPACITY, hoverinfo="skip"))
