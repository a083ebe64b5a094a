"""One row per GRPO group of a step: size, pass rate, reward/length/KL stats and flags."""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.index.extras import extra_column
from loaders.index.steps import finite

DEFAULT_PASS = 0.5  # a reward at or above it passes: 1 vs 0, 1 vs -1 and 1.0 vs 0.1 alike
FLAT = 1e-12  # rewards closer than this are equal
CORRECT_COLUMNS = tuple(extra_column(key) for key in S.CORRECT_KEYS)  # correct_column's


def correct_column(frame: pd.DataFrame) -> str | None:
    """A numeric correctness column the trainer logged beside the reward, if any."""
    for key in S.CORRECT_KEYS:
        column = extra_column(key)
        if column in frame.columns and pd.api.types.is_numeric_dtype(frame[column]) \
                and frame[column].notna().any():
            return column
    return None


def pass_rule(frame: pd.DataFrame, threshold: float = DEFAULT_PASS) -> str:
    """What `passed` counts as a pass for this frame, for the page to say."""
    column = correct_column(frame)
    return f"{column} > 0.5" if column is not None else f"reward ≥ {threshold:g}"


def passed(frame: pd.DataFrame, threshold: float = DEFAULT_PASS) -> tuple[pd.Series, str]:
    """(pass per sample, the rule): the trainer's correctness key when it logged one
    (> 0.5), else reward >= threshold.  A missing reward does not pass."""
    return passes(frame, correct_column(frame), threshold)


def passes(frame: pd.DataFrame, column: str | None, threshold: float = DEFAULT_PASS
           ) -> tuple[pd.Series, str]:
    """passed, by the correctness column found over the whole run (None: by reward)."""
    if column is not None:
        return (frame[column] > 0.5).fillna(False), f"{column} > 0.5"
    return (frame[S.REWARD] >= threshold).fillna(False), f"reward ≥ {threshold:g}"


def zero_variance(rewarded: pd.Series, low: pd.Series, high: pd.Series) -> pd.Series:
    """Groups with two or more finite rewards, all equal (fewer is no variance at all: the
    UNDER_TWO_REWARDS flag, not this one)."""
    return (rewarded >= 2) & ((high - low).abs() < FLAT)


def group_table(rows: pd.DataFrame, advantage: pd.Series, passes: pd.Series,
                kl_column: str, left_out: pd.DataFrame | None = None) -> pd.DataFrame:
    """The groups of `rows` (one step's trained samples), indexed by group id, with the
    first prompt preview, stats and the zero-variance / all-correct / all-wrong flags."""
    if rows.empty:
        return _empty()
    work = pd.DataFrame({
        S.REWARD: finite(rows[S.REWARD]), S.RESPONSE_LEN: rows[S.RESPONSE_LEN].astype(np.float64),
        S.TRUNCATED: rows[S.TRUNCATED].astype(np.float64), "kl": rows[kl_column],
        S.ADVANTAGE: advantage, "pass": passes.astype(np.float64), S.PROMPT: rows[S.PROMPT]})
    by = work.groupby(rows[S.GROUP_ID], sort=False)
    reward, rewarded = by[S.REWARD], by[S.REWARD].count()
    table = pd.DataFrame({
        S.PROMPT: by[S.PROMPT].first(), S.GROUP_SIZE: by.size(), S.GROUP_REWARDED: rewarded,
        S.PASS_RATE: by["pass"].mean(), S.stat(S.REWARD, "mean"): reward.mean(),
        # one reward has no spread: NaN (shown blank), not the 0 of a flat group
        S.stat(S.REWARD, "std"): reward.std(ddof=0).where(rewarded >= 2),
        S.stat(S.REWARD, "min"): reward.min(),
        S.stat(S.REWARD, "max"): reward.max(),
        S.stat(S.RESPONSE_LEN, "mean"): by[S.RESPONSE_LEN].mean(),
        S.stat(S.RESPONSE_LEN, "std"): by[S.RESPONSE_LEN].std(ddof=0),
        S.TRUNCATED_SHARE: by[S.TRUNCATED].mean(), S.stat("kl", "mean"): by["kl"].mean(),
        S.ADVANTAGE_SPREAD: by[S.ADVANTAGE].max() - by[S.ADVANTAGE].min()})
    table[S.GROUP_LEFT_OUT] = _left_out_counts(table.index, left_out)
    return with_flags(table)


def with_flags(table: pd.DataFrame) -> pd.DataFrame:
    """Add the flags and the kind (solved / unsolved / mixed) from the stats columns."""
    rewarded = table[S.GROUP_REWARDED]
    table[S.ZERO_VARIANCE] = zero_variance(rewarded, table[S.stat(S.REWARD, "min")],
                                           table[S.stat(S.REWARD, "max")])
    table[S.UNDER_TWO_REWARDS] = rewarded < 2
    table[S.NO_SIGNAL] = table[S.ZERO_VARIANCE] | table[S.UNDER_TWO_REWARDS]
    table[S.ALL_CORRECT] = table[S.PASS_RATE] >= 1.0
    table[S.ALL_WRONG] = table[S.PASS_RATE] <= 0.0
    table[S.GROUP_KIND] = np.select([table[S.ALL_CORRECT], table[S.ALL_WRONG]],
                                    ["solved", "unsolved"], "mixed")
    return table


def mix(table: pd.DataFrame) -> dict[str, int]:
    """How many groups give no signal (zero variance or under two rewards, which partition
    them), and are solved, unsolved and mixed (which partition the groups)."""
    counts = table[S.GROUP_KIND].value_counts()
    flags = (S.NO_SIGNAL, S.ZERO_VARIANCE, S.UNDER_TWO_REWARDS)
    return {"groups": len(table), **{flag: int(table[flag].sum()) for flag in flags},
            **{kind: int(counts.get(kind, 0)) for kind in S.GROUP_KINDS}}


def _left_out_counts(ids: pd.Index, left_out: pd.DataFrame | None) -> np.ndarray:
    if left_out is None or left_out.empty:
        return np.zeros(len(ids), dtype=np.int64)
    counts = left_out.groupby(S.GROUP_ID).size()
    return counts.reindex(ids, fill_value=0).to_numpy(dtype=np.int64)


def _empty() -> pd.DataFrame:
    table = pd.DataFrame(columns=[S.PROMPT, S.GROUP_SIZE, S.GROUP_REWARDED, S.PASS_RATE,
                                  S.stat(S.REWARD, "max"), S.stat(S.REWARD, "min")])
    table.index.name = S.GROUP_ID
    return with_flags(table.astype({S.GROUP_SIZE: "int64", S.GROUP_REWARDED: "int64",
                                    S.PASS_RATE: "float64",
                                    S.stat(S.REWARD, "max"): "float64",
                                    S.stat(S.REWARD, "min"): "float64"}))
