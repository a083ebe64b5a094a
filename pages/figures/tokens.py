"""Pure builders of the token views: padding, windowing, the window's table and its inline
coloured text (the overview strips are in token_strip, the jumps in token_top)."""
from __future__ import annotations

import html

import numpy as np
import pandas as pd

from loaders import schema as S
from pages.figures.text import visible_token
from pages.figures.token_text import PLAIN, decoded, shown_token

WINDOW = 256  # tokens shown inline and in the table: a screenful to read, a bounded page


def drop_padding(tokens: pd.DataFrame, pad: str) -> pd.DataFrame:
    """Token rows without pad tokens (the index column keeps each token's position)."""
    if not pad or tokens.empty:
        return tokens
    return tokens[tokens[S.TOKEN] != pad]


def token_metrics(tokens: pd.DataFrame) -> list[str]:
    """Metrics with data for this sample: the schema's, then extra arrays (entropy, ...)."""
    known = [m for m in S.TOKEN_METRICS if m in tokens and tokens[m].notna().any()]
    extra = [c for c in tokens.columns if c not in S.TOKEN_METRICS
             and c not in (S.TOKEN, S.TOKEN_INDEX, S.TURN, S.TRAINED) and tokens[c].notna().any()]
    return known + extra


def window(tokens: pd.DataFrame, start: int, width: int = WINDOW) -> pd.DataFrame:
    """Rows start..start+width of the (unpadded) token frame."""
    return tokens.iloc[max(0, start): max(0, start) + width]


def metrics_table(tokens: pd.DataFrame, metrics: list[str], style: str = PLAIN) -> pd.DataFrame:
    """One row per token of the window: its position, its text (whitespace made visible)
    and each metric."""
    table = tokens[metrics].copy()
    table.insert(0, "token", [shown_token(t, style) for t in tokens[S.TOKEN]])
    table.insert(0, "position", tokens[S.TOKEN_INDEX].to_numpy())
    return table.reset_index(drop=True)


def colour_scale(values: np.ndarray) -> tuple[float, float] | None:
    """(zero point, scale) of the colours: from the whole response, so a token has the same
    colour in every window; None when there is no finite value."""
    values = np.asarray(values, dtype=float)
    finite = values[np.isfinite(values)]
    if not finite.size:
        return None
    signed = finite.min() < 0 < finite.max()
    low = 0.0 if signed else float(finite.min())
    return low, float(np.percentile(np.abs(finite - low), 99)) or 1.0


def inline_html(tokens: pd.DataFrame, metric: str, metrics: list[str],
                scale: tuple[float, float] | None = None, style: str = PLAIN,
                marked: frozenset[int] = frozenset()) -> str:
    """The tokens as escaped, coloured spans; hover shows every metric; wraps naturally.
    Tokens at positions in `marked` (past a threshold, or jumped to) are outlined."""
    values = tokens[metric].to_numpy(dtype=float) if metric in tokens else np.zeros(len(tokens))
    colours = _colours(values, colour_scale(values) if scale is None else scale)
    columns = [tokens[m].to_numpy(dtype=float) for m in metrics]
    spans = []
    for i, (index, token) in enumerate(zip(tokens[S.TOKEN_INDEX], tokens[S.TOKEN])):
        title = html.escape(" | ".join(f"{m}={c[i]:.4g}" for m, c in zip(metrics, columns)))
        piece = decoded(str(token), style)
        outline = ";outline:2px solid #ff9800" if int(index) in marked else ""
        spans.append(f'<span class="tok" style="background:{colours[i]}{outline}" '
                     f'title="#{int(index)} {title}">{html.escape(visible_token(piece))}</span>'
                     + ("<br>" if "\n" in piece else ""))
    return ('<div class="tokens" style="font-family:monospace;line-height:1.9;'
            'white-space:normal;word-break:break-all">' + "".join(spans) + "</div>")


def _colours(values: np.ndarray, scale: tuple[float, float] | None) -> list[str]:
    if scale is None:
        return ["transparent"] * len(values)
    low, scale = scale
    out = []
    for v in values:
        if not np.isfinite(v):
            out.append("#bbbbbb")
            continue
        x = float(np.clip((v - low) / scale, -1, 1))
        out.append(f"rgba(214,39,40,{x:.2f})" if x >= 0 else f"rgba(31,119,180,{-x:.2f})")
    return out
