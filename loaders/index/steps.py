"""Per-step aggregates of the summary frame."""
from __future__ import annotations

from typing import TypeVar

import numpy as np
import pandas as pd

from loaders import schema as S

AGGREGATED = (S.REWARD, S.REF_REWARD, S.VALID_REWARD, S.REF_VALID_REWARD, S.REWARD_GAP,
              S.LOG_RATIO_MEAN, *map(S.kl_mean, S.KL_ESTIMATORS),
              *map(S.kl_sum, S.KL_ESTIMATORS), S.RESPONSE_LEN, S.RESPONSE_CHARS,
              S.REF_RESPONSE_CHARS, S.VALUE_MEAN, S.TOKEN_REWARD_SUM, S.POLICY_LAG)
# every column step_stats reads
STEP_STATS_COLUMNS = (S.STEP, *AGGREGATED, *S.FLAGS, S.NAN_COUNT)
_QUANTILES = {"p10": 0.1, "p25": 0.25, "p50": 0.5, "p75": 0.75, "p90": 0.9}
Numbers = TypeVar("Numbers", pd.Series, pd.DataFrame)


def finite(values: Numbers) -> Numbers:
    """NaN and ±inf made missing: a statistic of a step or a group is of its finite values
    (one reward of inf made its step's mean inf and its std NaN, and the curve lost it; the
    sample is counted among the run's non-finite values)."""
    return values.where(np.isfinite(values.to_numpy(np.float64)))


def step_stats(samples: pd.DataFrame) -> pd.DataFrame:
    """One row per step: sample count, win rate, flag shares and stats of AGGREGATED."""
    if samples.empty:
        return pd.DataFrame(index=pd.Index([], name=S.STEP, dtype="int64"))
    grouped = samples.groupby(S.STEP, sort=True)
    parts = {S.SAMPLES: grouped.size()}
    by_step = finite(samples[list(AGGREGATED)]).groupby(samples[S.STEP], sort=True)
    for column in AGGREGATED:
        values = by_step[column]
        parts[S.stat(column, "mean")] = values.mean()
        parts[S.stat(column, "std")] = values.std(ddof=0)
        parts[S.stat(column, "min")] = values.min()
        parts[S.stat(column, "max")] = values.max()
        quantiles = values.quantile(list(_QUANTILES.values())).unstack()
        for name, q in _QUANTILES.items():
            parts[S.stat(column, name)] = quantiles[q]
    parts.update(_wins(samples))
    for flag in S.FLAGS:
        parts[f"{flag}_share"] = samples[flag].astype(np.float64).groupby(samples[S.STEP]).mean()
    parts[S.NAN_COUNT] = grouped[S.NAN_COUNT].sum()
    return pd.DataFrame(parts)


def _wins(samples: pd.DataFrame) -> dict[str, pd.Series]:
    """Win, tie and loss shares of the pairs with both rewards, and the win rate
    wins / (wins + losses): a tie is neither, so discrete rewards do not read as losing."""
    both = samples[S.REWARD].notna() & samples[S.REF_REWARD].notna()
    step = samples[S.STEP]
    outcome = {S.WIN_SHARE: samples[S.REWARD] > samples[S.REF_REWARD],
               S.TIE_SHARE: samples[S.REWARD] == samples[S.REF_REWARD],
               S.LOSS_SHARE: samples[S.REWARD] < samples[S.REF_REWARD]}
    out = {name: hit.where(both).astype(np.float64).groupby(step).mean()
           for name, hit in outcome.items()}
    with np.errstate(invalid="ignore", divide="ignore"):
        out[S.WIN_RATE] = out[S.WIN_SHARE] / (out[S.WIN_SHARE] + out[S.LOSS_SHARE])
    return out
