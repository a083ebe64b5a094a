"""Pure builders of the token views: windowing, heatmap, table and inline coloured text."""
from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from loaders import schema as S
from pages.figures.text import visible_token

WINDOW = 128  # tokens per heatmap window: wide enough to read, narrow enough to stay legible


def drop_padding(tokens: pd.DataFrame, pad: str) -> pd.DataFrame:
    """Token rows without pad tokens (the index column keeps each token's position)."""
    if not pad or tokens.empty:
        return tokens
    return tokens[tokens[S.TOKEN] != pad]


def token_metrics(tokens: pd.DataFrame) -> list[str]:
    """Metrics with data for this sample: the schema's, then extra arrays (entropy, ...)."""
    known = [m for m in S.TOKEN_METRICS if m in tokens and tokens[m].notna().any()]
    extra = [c for c in tokens.columns if c not in S.TOKEN_METRICS
             and c not in (S.TOKEN, S.TOKEN_INDEX) and tokens[c].notna().any()]
    return known + extra


def window(tokens: pd.DataFrame, start: int, width: int = WINDOW) -> pd.DataFrame:
    """Rows start..start+width of the (unpadded) token frame."""
    return tokens.iloc[max(0, start): max(0, start) + width]


def _labels(tokens: pd.DataFrame) -> list[str]:
    return [f"{i}:{visible_token(t)}" for i, t in zip(tokens[S.TOKEN_INDEX], tokens[S.TOKEN])]


def heatmap_figure(tokens: pd.DataFrame, metrics: list[str]) -> go.Figure:
    """Rows are metrics, columns are tokens; each row is scaled to its own range."""
    z = np.vstack([_scaled(tokens[m].to_numpy(dtype=float)) for m in metrics]) if metrics \
        else np.zeros((0, len(tokens)))
    raw = np.vstack([tokens[m].to_numpy(dtype=float) for m in metrics]) if metrics else z
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(len(tokens))), y=[html.escape(m) for m in metrics], customdata=raw,
        colorscale="RdBu_r",
        zmid=0, zmin=-1, zmax=1, text=[[html.escape(t) for t in _labels(tokens)]] * len(metrics),
        hovertemplate="%{text}<br>%{y} = %{customdata:.4g}<extra></extra>",
        colorbar={"title": "scaled per row"}))
    fig.update_xaxes(tickvals=list(range(len(tokens))),
                     ticktext=[html.escape(t) for t in _labels(tokens)], tickangle=-60)
    fig.update_layout(height=140 + 32 * len(metrics), margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      title="token metrics (each row scaled to ±max|value| of this window)")
    return fig


def _scaled(values: np.ndarray) -> np.ndarray:
    finite = values[np.isfinite(values)]
    scale = np.abs(finite).max() if finite.size else 0.0
    return values / scale if scale > 0 else np.zeros_like(values)


def metrics_table(tokens: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """Metrics as rows, tokens as columns named 'index:token' (whitespace made visible)."""
    table = tokens[metrics].T
    table.columns = _labels(tokens)
    return table


def inline_html(tokens: pd.DataFrame, metric: str, metrics: list[str]) -> str:
    """The response as escaped, coloured spans; hover shows every metric; wraps naturally."""
    values = tokens[metric].to_numpy(dtype=float) if metric in tokens else np.zeros(len(tokens))
    colours = _colours(values)
    columns = [tokens[m].to_numpy(dtype=float) for m in metrics]
    spans = []
    for i, (index, token) in enumerate(zip(tokens[S.TOKEN_INDEX], tokens[S.TOKEN])):
        title = html.escape(" | ".join(f"{m}={c[i]:.4g}" for m, c in zip(metrics, columns)))
        text = html.escape(visible_token(str(token)))
        spans.append(f'<span class="tok" style="background:{colours[i]}" '
                     f'title="#{int(index)} {title}">{text}</span>'
                     + ("<br>" if "\n" in str(token) else ""))
    return ('<div class="tokens" style="font-family:monospace;line-height:1.9;'
            'white-space:normal;word-break:break-all">' + "".join(spans) + "</div>")


def _colours(values: np.ndarray) -> list[str]:
    finite = values[np.isfinite(values)]
    if not finite.size:
        return ["transparent"] * len(values)
    signed = finite.min() < 0 < finite.max()
    low = 0.0 if signed else finite.min()
    scale = np.percentile(np.abs(finite - low), 99) or 1.0
    out = []
    for v in values:
        if not np.isfinite(v):
            out.append("#bbbbbb")
            continue
        x = float(np.clip((v - low) / scale, -1, 1))
        out.append(f"rgba(214,39,40,{x:.2f})" if x >= 0 else f"rgba(31,119,180,{-x:.2f})")
    return out
