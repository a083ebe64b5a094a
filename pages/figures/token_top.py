"""Jump to what matters in a long response: its top tokens by a metric, or every token past
a threshold, each with its position and a few tokens of context."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from loaders import schema as S
from pages.figures.token_text import IDS, PLAIN, shown_token

TOP_K = 20
MAX_PAST = 40  # bars of the threshold list; the strips mark every hit (up to 300 a strip)
CONTEXT = 6  # tokens each side


class Ranking(NamedTuple):
    label: str
    column: str
    largest: bool  # rank by the largest value (else the smallest)
    magnitude: bool = False  # rank by |value| (signed metrics) ...
    log_magnitude: bool = False  # ... or by |log value| (a ratio: far from 1 either way)


def rankings(metrics: list[str], kl: str) -> dict[str, Ranking]:
    """The rankings this sample's metrics allow, by label."""
    wanted = [Ranking("|log_ratio|", S.LOG_RATIO, True, magnitude=True),
              Ranking(f"KL ({kl})", kl, True, magnitude=kl == S.K1),
              Ranking("lowest prob", S.PROB, False),
              Ranking("mismatch_kl", "mismatch_kl", True),
              Ranking("importance_ratio (far from 1)", "importance_ratio", True,
                      log_magnitude=True),
              Ranking("entropy", "entropy", True),
              Ranking("|advantages|", "advantages", True, magnitude=True)]
    return {r.label: r for r in wanted if r.column in metrics}


def score(values: np.ndarray, ranking: Ranking) -> np.ndarray:
    """Larger is more notable; NaN for tokens without a finite value."""
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        if ranking.log_magnitude:
            scored = np.abs(np.log(values))
        elif ranking.magnitude:
            scored = np.abs(values)
        else:
            scored = values if ranking.largest else -values
    return np.where(np.isfinite(scored), scored, np.nan)


def top_positions(values: np.ndarray, ranking: Ranking, k: int = TOP_K) -> np.ndarray:
    """Row numbers of the k most notable tokens, most notable first (ties: earlier first)."""
    scored = score(values, ranking)
    finite = np.flatnonzero(~np.isnan(scored))
    if len(finite) > k:
        cut = np.argpartition(-scored[finite], k - 1)[:k]
        threshold = scored[finite[cut]].min()
        finite = finite[scored[finite] >= threshold]
    order = np.lexsort((finite, -scored[finite]))
    return finite[order][:k]


def past_positions(values: np.ndarray, ranking: Ranking, threshold: float) -> np.ndarray:
    """Row numbers of the tokens past the threshold, in order: above it for a largest-first
    ranking (on |value| or |log value| when it ranks those), below it for lowest-first."""
    values = np.asarray(values, dtype=np.float64)
    if ranking.largest:
        compared = score(values, ranking)
        return np.flatnonzero(compared >= threshold)
    with np.errstate(invalid="ignore"):
        return np.flatnonzero(values <= threshold)


def token_rows(frame: pd.DataFrame, rows: np.ndarray, column: str, style: str = PLAIN,
               tokens: list[str] | None = None) -> pd.DataFrame:
    """One row per chosen token: its position, text, value and context (whitespace and
    byte-level pieces made visible; the token itself in ⟦ ⟧).  `tokens`: the frame's
    token texts as a list, when the caller has them already."""
    tokens = frame[S.TOKEN].tolist() if tokens is None else tokens
    values = frame[column].to_numpy(dtype=np.float64)
    out = {"position": frame[S.TOKEN_INDEX].to_numpy()[rows], "token": [], column: values[rows],
           "context": []}
    sep = " " if style == IDS else ""  # token ids would run together
    for row in rows:
        out["token"].append(shown_token(tokens[row], style))
        before = sep.join(shown_token(t, style) for t in tokens[max(0, row - CONTEXT):row])
        after = sep.join(shown_token(t, style) for t in tokens[row + 1:row + 1 + CONTEXT])
        out["context"].append(sep.join(p for p in (before, f"⟦{out['token'][-1]}⟧", after)
                                       if p))
    return pd.DataFrame(out)
