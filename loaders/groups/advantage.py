"""Group-relative advantages, as GRPO, Dr. GRPO and RLOO compute them from rewards.

verl's formulas (trainer/ppo/core_algos.py): GRPO divides by the group's unbiased std plus
1e-6; Dr. GRPO (norm_adv_by_std_in_grpo=False) only subtracts the mean; RLOO subtracts the
mean of the *other* answers, which is n/(n-1) times the GRPO numerator.  A group is its
finite rewards (a NaN or inf reward gets no advantage and enters no mean): one with fewer
than two has no relative advantage, NaN here (verl would use the raw reward).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.index.extras import extra_column
from loaders.index.steps import finite

GRPO, DR_GRPO, RLOO = "grpo", "dr_grpo", "rloo"
MODES = (GRPO, DR_GRPO, RLOO)
LABELS = {GRPO: "GRPO: (r − mean) / std", DR_GRPO: "Dr. GRPO: r − mean",
          RLOO: "RLOO: r − mean of the others"}
EPSILON = 1e-6
# the columns trainer_column looks for
TRAINER_COLUMNS = tuple(column for key in S.ADVANTAGE_KEYS
                        for column in (extra_column(key), extra_column(S.extra_array_mean(key))))


def derived(rewards: pd.Series, groups: list[pd.Series], mode: str = GRPO) -> pd.Series:
    """Each sample's advantage within its group (groups: the key columns, e.g. step and
    group id); NaN for a group of under two finite rewards or a reward that is not finite."""
    rewards = finite(rewards)
    by = rewards.groupby(groups, sort=False, dropna=False)
    mean, count = by.transform("mean"), by.transform("count")
    if mode == GRPO:
        out = (rewards - mean) / (by.transform("std", ddof=1) + EPSILON)
    elif mode == DR_GRPO:
        out = rewards - mean
    elif mode == RLOO:
        out = (rewards - mean) * count / (count - 1)
    else:
        raise ValueError(f"unknown advantage mode {mode!r}; one of {', '.join(MODES)}")
    return out.where(count >= 2).astype(np.float64)


def trainer_column(frame: pd.DataFrame) -> str | None:
    """The summary column holding the trainer's own per-sample advantage, if any: a scalar
    key as written, else the mean of a per-token advantage array."""
    for key in S.ADVANTAGE_KEYS:
        for column in (extra_column(key), extra_column(S.extra_array_mean(key))):
            if column in frame.columns and pd.api.types.is_numeric_dtype(frame[column]) \
                    and frame[column].notna().any():
                return column
    return None


def source(frame: pd.DataFrame, mode: str = GRPO) -> str:
    """Where `advantages` takes a frame's advantages from, for the page to say."""
    column = trainer_column(frame)
    return f"trainer ({column})" if column else f"derived, {LABELS[mode]}"


def advantages(frame: pd.DataFrame, groups: list[pd.Series], mode: str = GRPO) -> pd.Series:
    """Advantage per sample: the trainer's when the dump has one, else derived by `mode`."""
    column = trainer_column(frame)
    if column is not None:
        return frame[column].astype(np.float64)
    return derived(frame[S.REWARD], groups, mode)
