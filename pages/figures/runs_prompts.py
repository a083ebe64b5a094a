"""Pure builders of the same prompt across runs: the matched-prompt table, its filters, and
one prompt's answers per run (frames from loaders.serve.runset)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from loaders import schema as S
from pages.figures.text import strip_pad, strip_system
from pages.frame.view import DisplayOptions

ALL, B_BETTER, B_WORSE, ONLY_ONE = "all", "B better", "B worse", "only one run has it"
FILTERS = (ALL, B_BETTER, B_WORSE, ONLY_ONE)
MEAN, PASS = S.stat(S.REWARD, "mean"), S.PASS_RATE
DELTA_MEAN, DELTA_PASS = S.run_column(MEAN, S.DELTA), S.run_column(PASS, S.DELTA)
MAX_ROWS = 2000  # rows sent to the browser; the rest are counted
PREVIEW = 160  # characters of the prompt shown in the table


def filter_prompts(table: pd.DataFrame, how: str) -> pd.DataFrame:
    """The rows a filter keeps: B's reward mean above or below A's (both have the prompt),
    or prompts exactly one of the compared runs has."""
    if how == B_BETTER:
        return table[table[DELTA_MEAN] > 0]
    if how == B_WORSE:
        return table[table[DELTA_MEAN] < 0]
    if how == ONLY_ONE:
        return table[table[S.RUNS_WITH] == 1]
    return table


def ordered(table: pd.DataFrame) -> pd.DataFrame:
    """Largest |B − A| of the reward mean first; prompts one of A, B lacks after, by key."""
    size = table[DELTA_MEAN].abs().fillna(-1.0)
    return table.assign(_size=size).sort_values(["_size", S.RUNS_WITH], ascending=False,
                                                kind="stable").drop(columns="_size")


def _preview(text: object, options: DisplayOptions) -> str:
    text = strip_pad(strip_system(str(text or ""), options.system_marker), options.pad_token)
    text = " ".join(text.split())
    return text if len(text) <= PREVIEW else text[: PREVIEW - 1] + "…"


def display_columns(labels: Sequence[str], a: int, b: int) -> dict[str, str]:
    """The table's column names as the page shows them, by the frame's column."""
    arrow = f"{labels[b]} − {labels[a]}"
    names = {S.PROMPT: "prompt", DELTA_MEAN: f"Δ reward ({arrow})",
             DELTA_PASS: f"Δ pass ({arrow})", S.RUNS_WITH: "runs with it"}
    for i, label in enumerate(labels):  # after the difference, which is what is looked for
        names |= {S.run_column(S.SAMPLES, i): f"{label} · n",
                  S.run_column(MEAN, i): f"{label} · reward",
                  S.run_column(PASS, i): f"{label} · pass"}
    return names


def table_view(table: pd.DataFrame, labels: Sequence[str], a: int, b: int,
               options: DisplayOptions) -> pd.DataFrame:
    """The first MAX_ROWS rows with readable column names; the index stays the match key."""
    shown = table.head(MAX_ROWS)
    names = display_columns(labels, a, b)
    view = shown[[c for c in names if c in shown.columns]].rename(columns=names)
    view["prompt"] = [_preview(t, options) for t in shown[S.PROMPT]]
    delta_pass = names[DELTA_PASS]  # a difference of two shares: percentage points
    if delta_pass in view.columns:
        view[delta_pass] = view[delta_pass] * 100
    return view


POINTS = "%+.1f pp"  # how the table's Δ pass reads: B's pass rate less A's, in points


def counts(table: pd.DataFrame, a: int, b: int) -> dict[str, int]:
    """How many matched prompts each filter keeps, for its label."""
    both = table[S.run_column(S.SAMPLES, a)].gt(0) & table[S.run_column(S.SAMPLES, b)].gt(0)
    return {ALL: len(table), B_BETTER: int((table[DELTA_MEAN] > 0).sum()),
            B_WORSE: int((table[DELTA_MEAN] < 0).sum()),
            ONLY_ONE: int((table[S.RUNS_WITH] == 1).sum()), "both": int(both.sum())}


def answers_view(rows: pd.DataFrame, estimator: str) -> pd.DataFrame:
    """One run's answers to the prompt: reward, length and mean KL per answer, and its key."""
    kl = S.kl_mean(estimator)
    return pd.DataFrame({
        "reward": rows[S.REWARD].to_numpy(),
        "length": rows[S.RESPONSE_LEN].to_numpy(),
        f"KL ({estimator})": rows[kl].to_numpy() if kl in rows else np.full(len(rows), np.nan),
        "sample": rows[S.KEY].astype(str).to_numpy(),  # last: the numbers matter most
    })


def summary_line(rows: pd.DataFrame, estimator: str) -> str:
    """'n answers · reward mean r · length mean l · KL k' for a run's column head."""
    if rows.empty:
        return "no answer to this prompt at this step"
    kl = S.kl_mean(estimator)
    parts = [f"{len(rows)} answers", f"reward mean {rows[S.REWARD].mean():.3g}",
             f"length mean {rows[S.RESPONSE_LEN].mean():.0f}"]
    if kl in rows and rows[kl].notna().any():
        parts.append(f"KL {rows[kl].mean():.3g}")
    return " · ".join(parts)
