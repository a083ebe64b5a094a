"""A reward's components (metric_names.reward_components): their means per step, how they
move together at a step, and the samples where they disagree (a format reward at its best
while the accuracy is at its worst: the classic hack).  Made over the index's numbers, a
few steps at a time; a step's tables over its own rows."""
from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.index.numbers import Numbers, stacked
from loaders.metric_names import reward_components

MAX_DISAGREEMENTS = 200  # samples listed at a step: the table stays a glance
SUM_TOLERANCE = 1e-6  # relative: components that add up to the reward, float noise aside


def components(rows: pd.DataFrame) -> list[str]:
    """The reward components among rows' columns that hold numbers (a text column named
    like one is not)."""
    return [c for c in reward_components(str(c) for c in rows.columns)
            if pd.api.types.is_numeric_dtype(rows[c]) and not pd.api.types.is_bool_dtype(rows[c])]


def means_table_name(names: list[str]) -> str:
    """The name the components' means by step are kept under beside the index: a digest of
    their names, which are the dump's own keys (any text, upper case included), where a
    kept table's name is a file name of [a-z0-9_=-]."""
    digest = hashlib.blake2b("\0".join(names).encode(), digest_size=8).hexdigest()
    return f"reward_components-{digest}"


def means_by_step(rows: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Per step: the reward's mean, each component's, and how many samples had each."""
    grouped = rows.groupby(S.STEP)
    out = pd.DataFrame({S.REWARD: grouped[S.REWARD].mean()})
    for name in names:
        out[name] = grouped[name].mean()
        out[f"{name} samples"] = grouped[name].count()
    return out


def means_by_step_of(numbers: Numbers, names: list[str]) -> pd.DataFrame:
    """means_by_step over a served run, a few steps at a time."""
    reads = [S.STEP, S.REWARD, *names]
    parts = [p for p in numbers.per_step(reads, lambda rows: means_by_step(rows, names))
             if not p.empty]
    return stacked(parts) if parts else means_by_step(pd.DataFrame(
        {n: pd.Series([], dtype="float64") for n in reads}), names)


def add_up(rows: pd.DataFrame, names: list[str]) -> bool:
    """The components add up to the reward wherever a sample has them all (TRL's reward
    functions at weight 1, say): then a stacked chart shows the reward's make-up."""
    whole = rows[[S.REWARD, *names]].dropna()
    if whole.empty or len(names) < 2:
        return False
    total = whole[names].sum(axis=1)
    close = (total - whole[S.REWARD]).abs() <= SUM_TOLERANCE * np.maximum(
        1.0, whole[S.REWARD].abs())
    return bool(close.mean() >= 0.99)


def correlations(rows: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Pearson correlation of the reward and its components over one step's samples (NaN
    for a column that does not vary)."""
    return rows[[S.REWARD, *names]].astype(np.float64).corr()


def disagreements(rows: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """One step's samples where one component is at the step's best while another is at its
    worst (both varying at the step): which is high, which is low, and their values."""
    spread = {n: (rows[n].min(), rows[n].max()) for n in names if rows[n].notna().any()}
    varied = [n for n, (lo, hi) in spread.items() if hi > lo]
    found = []
    for high in varied:
        for low in varied:
            if high == low:
                continue
            hit = (rows[high] == spread[high][1]) & (rows[low] == spread[low][0])
            if hit.any():
                part = rows.loc[hit, [S.KEY, S.REWARD, high, low]].rename(
                    columns={high: "high value", low: "low value"})
                found.append(part.assign(high=high, low=low))
    if not found:
        return pd.DataFrame(columns=[S.KEY, S.REWARD, "high", "high value", "low", "low value"])
    table = pd.concat(found, ignore_index=True)
    return table[[S.KEY, S.REWARD, "high", "high value", "low", "low value"]].head(
        MAX_DISAGREEMENTS)
