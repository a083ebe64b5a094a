"""Pure builders of the token views: padding, windowing, the window's table and its inline
coloured text (the overview strips are in token_strip, the jumps in token_top)."""
from __future__ import annotations

import html

import numpy as np
import pandas as pd

from loaders import schema as S
from pages.figures import token_colours as C
from pages.figures.text import visible_token
from pages.figures.token_text import IDS, PLAIN, bounded, decoded, shown_token

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


def inline_html(tokens: pd.DataFrame, metric: str, metrics: list[str],
                scale: C.Scale | None = None, style: str = PLAIN,
                marked: frozenset[int] = frozenset()) -> str:
    """The tokens as escaped, coloured spans; hover shows every metric; wraps between
    tokens, never inside one (unless it is longer than the line), and after a newline.
    Tokens at positions in `marked` (past a threshold, or jumped to) are outlined; token
    ids (style IDS) are set apart by a gap, since they would otherwise run together."""
    if metric in tokens:
        values = tokens[metric].to_numpy(dtype=float)
        cells = C.cell_styles(values, C.scale_for(metric, values) if scale is None else scale)
    else:
        cells = C.cell_styles(np.zeros(len(tokens)), None)
    columns = [tokens[m].to_numpy(dtype=float) for m in metrics]
    box = _TOKEN_BOX + (";margin-right:0.6ch" if style == IDS else "")
    spans = []
    for i, (index, token) in enumerate(zip(tokens[S.TOKEN_INDEX], tokens[S.TOKEN])):
        title = html.escape(" | ".join(f"{m}={c[i]:.4g}" for m, c in zip(metrics, columns)))
        piece = decoded(str(token), style)
        outline = ";outline:2px solid #ff9800;outline-offset:-2px" if int(index) in marked else ""
        spans.append(f'<span class="tok" style="{cells[i]};{box}{outline}" '
                     f'title="#{int(index)} {title}">{html.escape(bounded(visible_token(piece)))}'
                     '</span>'
                     + ("<br>" if "\n" in piece else ""))
    return ('<div class="tokens" style="font-family:monospace;line-height:1.9;'
            'white-space:normal">' + "".join(spans) + "</div>")


# an atomic box: lines wrap between tokens; overflow-wrap splits only one longer than a line
_TOKEN_BOX = ("display:inline-block;line-height:1.4;max-width:100%;overflow-wrap:anywhere;"
              "white-space:pre-wrap")


_FALLBACK = (S.LOGPROB, "mismatch_kl", "entropy", "advantages")  # id-only formats have these


def default_metrics(available: list[str], kl_estimator: str) -> list[str]:
    """The strips shown at first: reward, KL and value when the dump has them, else what it
    has (logprob, mismatch, ...), else its first metric; never none when there is one."""
    preferred = [m for m in (S.TOKEN_REWARD, S.LOG_RATIO, kl_estimator, S.VALUE)
                 if m in available]
    return (preferred or [m for m in _FALLBACK if m in available][:2]) or available[:1]


def default_colour(available: list[str]) -> int:
    """Index of the metric the tokens are coloured by at first: log_ratio, else logprob."""
    for metric in (S.LOG_RATIO, S.LOGPROB):
        if metric in available:
            return available.index(metric)
    return 0
