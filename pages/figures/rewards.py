"""Pure builders of the Rewards page: step curves with std bands, and one step's rewards.

Every curve is drawn from the per-step aggregates (Run.step_stats), so the browser gets one
point per step and per curve, never one point per sample.  Each is a Vega-Lite chart (data,
spec: pages.figures.step_panels), so the page's first paint loads no Plotly; a click on a
curve picks the nearest step, a click on a histogram bar its bin.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from loaders import schema as S
from pages.figures.histogram import COLUMN, HIGH, LOW, binned, overlaid_bars
from pages.figures.smoothing import column_values, ema, first_value, has_data
from pages.figures.step_panels import PICK, Curve, Marks, Panel, panel
from pages.figures.vega import titled

RL_COLOR, REF_COLOR, WIN_COLOR = "#1f77b4", "#ff7f0e", "#9467bd"
VALID_COLOR, REF_VALID_COLOR = "#2ca02c", "#d62728"
GAIN_COLOR, LOSS_COLOR, EVEN_COLOR = "#2ca02c", "#d62728", "#9e9e9e"
CURVE_HEIGHT = 420
BIN = "bin"  # a histogram click's point selection: Streamlit reports it under this key


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


def _mean(stats: pd.DataFrame, column: str, zero_shift: bool) -> np.ndarray:
    y = column_values(stats, S.stat(column, "mean"))
    return y - first_value(y) if zero_shift else y


def _band(stats: pd.DataFrame, column: str, k: float, smoothing: float, offset: float
          ) -> tuple[np.ndarray, np.ndarray] | None:
    """mean ± k·std a step (each edge smoothed alike); None without a band."""
    if k <= 0:
        return None
    mean = column_values(stats, S.stat(column, "mean"))
    std = column_values(stats, S.stat(column, "std"))
    low, high = mean - k * std - offset, mean + k * std - offset
    return (ema(low, smoothing), ema(high, smoothing)) if smoothing > 0 else (low, high)


def step_curve(stats: pd.DataFrame, column: str, *, band_k: float = 1.0, smoothing: float = 0.0,
               zero_shift: bool = False, ref_column: str | None = None, title: str = "",
               step: int | None = None, alerts: tuple[int, ...] = (),
               extra: tuple[Curve, ...] = ()) -> Panel:
    """Per-step mean of a summary column with a ±k·std band, optionally against a reference
    (dashed) and `extra` curves; the chosen step and the alert steps marked; a click picks
    the nearest step."""
    mean = column_values(stats, S.stat(column, "mean"))
    offset = first_value(mean) if zero_shift else 0.0
    curves = [Curve(f"{column} mean", mean - offset, RL_COLOR)]
    if ref_column and has_data(stats, ref_column):
        curves.append(Curve(f"{ref_column} mean", _mean(stats, ref_column, zero_shift),
                            REF_COLOR, "dash"))
    marks = Marks(tuple(alerts), _band(stats, column, band_k, smoothing, offset), True)
    note = curve_note(stats, band_k, smoothing, zero_shift)
    return panel(stats.index.to_numpy(), curves + list(extra), title=f"{title or column} {note}",
                 y_title=title or column, step=step, smoothing=smoothing,
                 height=CURVE_HEIGHT, marks=marks)


def reward_curves(stats: pd.DataFrame, *, band_k: float = 1.0, smoothing: float = 0.0,
                  zero_shift: bool = False, step: int | None = None,
                  alerts: tuple[int, ...] = ()) -> Panel:
    """Reward with its band against ref_reward, plus the valid rewards when they were logged."""
    extra = tuple(Curve(f"{column} mean", _mean(stats, column, zero_shift), color, dash)
                  for column, color, dash in ((S.VALID_REWARD, VALID_COLOR, "solid"),
                                              (S.REF_VALID_REWARD, REF_VALID_COLOR, "dash"))
                  if has_data(stats, column))
    return step_curve(stats, S.REWARD, band_k=band_k, smoothing=smoothing,
                      zero_shift=zero_shift, ref_column=S.REF_REWARD, title=S.REWARD,
                      step=step, alerts=alerts, extra=extra)


def win_rate_curve(stats: pd.DataFrame, smoothing: float = 0.0, step: int | None = None
                   ) -> Panel:
    """Win rate wins / (wins + losses) against the reference, with the tie and loss shares
    of all pairs beside it: with discrete rewards many pairs tie, and a tie is no loss."""
    curves = [Curve("win rate (ties excluded)", column_values(stats, S.WIN_RATE), WIN_COLOR)]
    for column, name, color in ((S.TIE_SHARE, "tie share", EVEN_COLOR),
                                (S.LOSS_SHARE, "loss share", LOSS_COLOR)):
        values = column_values(stats, column)
        if np.isfinite(values).any():
            curves.append(Curve(name, values, color, "dot"))
    ema_note = f"; EMA {smoothing:g}, raw faint" if smoothing > 0 else ""
    title = (f"win rate = wins / (wins + losses) of {S.REWARD} vs {S.REF_REWARD}; ties "
             f"beside it ({_samples_note(stats)}{ema_note})")
    return panel(stats.index.to_numpy(), curves, title=title, y_title="share",
                 step=step, smoothing=smoothing, percent=True, height=CURVE_HEIGHT,
                 marks=Marks(pick=True))


def histogram_columns(rows: pd.DataFrame) -> list[str]:
    """The columns reward_histogram draws, in its bars' order."""
    return [c for c in (S.REWARD, S.REF_REWARD) if np.isfinite(column_values(rows, c)).any()]


def reward_histogram(rows: pd.DataFrame, bins: int = 30) -> Panel | None:
    """reward and ref_reward counts on shared bin edges, so the two bars line up; a bar a
    bin with samples (a click picks its column and bin); None without a finite reward."""
    series = {c: column_values(rows, c) for c in histogram_columns(rows)}
    infinite = sum(int(np.isinf(v).sum()) for v in series.values())
    series = {c: v[np.isfinite(v)] for c, v in series.items()}
    if not series:
        return None
    data, names = binned(series, bins)
    shown = " vs ".join(series)  # a dump without ref_reward draws, and names, reward alone
    left_out = f"; {infinite} of ±inf not drawn" if infinite else ""
    title = (f"{shown} distribution ({bins} bins{' on shared edges' if len(series) > 1 else ''}"
             f"; counts of samples{left_out}; click a bar to open its samples)")
    return Panel(data, histogram_spec(names, title))


def histogram_spec(names: list[str], title: str, x_title: str = S.REWARD) -> dict:
    """histogram.binned()'s bars, a colour a series (the reward's, then the reference's), a
    click picking a bar (BIN)."""
    return {"height": CURVE_HEIGHT, **titled(title),
            "params": [{"name": BIN, "select": {"type": "point", "on": "click",
                                                "fields": [COLUMN, LOW, HIGH]}}],
            **overlaid_bars(names, [RL_COLOR, REF_COLOR][:len(names)], (x_title, "samples"))}


def selected_step(selection: dict) -> int | None:
    """The step a curve click picked (Vega-Lite's point selection by field: `{"pick":
    [{"step": 12}]}`), rounded to a step; None when it names none."""
    picked = selection.get(PICK) or []
    try:
        x = float(picked[0]["step"]) if picked else math.nan
    except (KeyError, TypeError, ValueError):
        return None
    return int(round(x)) if math.isfinite(x) else None


def picked_bin(selection: dict, columns: tuple[str, ...] = (S.REWARD, S.REF_REWARD)
               ) -> tuple[str, float, float] | None:
    """(column, low, high) of the histogram bar a click picked; None when it names none, or
    a column the histogram does not draw (not in `columns`)."""
    picked = selection.get(BIN) or []
    try:
        column, low, high = (picked[0][COLUMN], float(picked[0][LOW]),
                             float(picked[0][HIGH])) if picked else (None, math.nan, math.nan)
    except (KeyError, TypeError, ValueError):
        return None
    if column not in columns or not (math.isfinite(low) and math.isfinite(high)):
        return None
    return column, low, high
