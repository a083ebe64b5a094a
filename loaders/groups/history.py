"""Each prompt's group at every step it appears, and one row per prompt over the run.

A prompt is its PROMPT_ID (the unpadded prompt text's hash), so the same question matches
across steps even when the trainer's group ids (verl's uid) are new at every step.  Built
from the summary frame alone: 100 steps of 8,192 samples is a few grouped passes.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.groups.table import zero_variance
from loaders.index.steps import finite

# every column prompt_steps reads (and the prompt id, to find a prompt's preview)
HISTORY_COLUMNS = (S.PROMPT_ID, S.STEP, S.GROUP_ID, S.REWARD, S.RESPONSE_LEN)
REGRESSED_BELOW = 0.5  # "lost" after being solved: a later pass rate at or below this
MIN_STEPS = 2  # a prompt seen once has no history to put in a category


def prompt_steps(samples: pd.DataFrame, passes: pd.Series) -> pd.DataFrame:
    """One row per (prompt, step): its group id, size, pass rate, reward mean, min, max,
    length mean and the zero-variance flag, sorted by prompt then step."""
    work = pd.DataFrame({S.PROMPT_ID: samples[S.PROMPT_ID].to_numpy(),
                         S.STEP: samples[S.STEP].to_numpy(),
                         S.GROUP_ID: samples[S.GROUP_ID].to_numpy(),
                         S.REWARD: finite(samples[S.REWARD]).to_numpy(),
                         S.RESPONSE_LEN: samples[S.RESPONSE_LEN].to_numpy(np.float64),
                         "pass": passes.to_numpy(np.float64)})
    by = work.groupby([S.PROMPT_ID, S.STEP], sort=True)
    out = by.agg(**{S.GROUP_ID: (S.GROUP_ID, "first"), S.GROUP_SIZE: (S.REWARD, "size"),
                    S.GROUP_REWARDED: (S.REWARD, "count"),
                    S.PASS_RATE: ("pass", "mean"),
                    S.stat(S.REWARD, "mean"): (S.REWARD, "mean"),
                    S.stat(S.REWARD, "min"): (S.REWARD, "min"),
                    S.stat(S.REWARD, "max"): (S.REWARD, "max"),
                    S.stat(S.RESPONSE_LEN, "mean"): (S.RESPONSE_LEN, "mean")})
    out[S.ZERO_VARIANCE] = zero_variance(out[S.GROUP_REWARDED], out[S.stat(S.REWARD, "min")],
                                         out[S.stat(S.REWARD, "max")])
    return out.reset_index()


def prompt_table(steps: pd.DataFrame, previews: pd.Series) -> pd.DataFrame:
    """One row per prompt: steps seen, first step solved, last step unsolved, pass-rate
    trend, zero-variance steps, mean pass rate, its flags and a category."""
    step = steps[S.STEP].astype(np.float64)
    rate = steps[S.PASS_RATE]
    by = steps.groupby(S.PROMPT_ID, sort=False)
    table = pd.DataFrame({
        S.STEPS_SEEN: by.size(),
        S.FIRST_SOLVED: step.where(rate >= 1.0).groupby(steps[S.PROMPT_ID]).min(),
        S.LAST_UNSOLVED: step.where(rate <= 0.0).groupby(steps[S.PROMPT_ID]).max(),
        S.PASS_TREND: _slopes(step, rate, steps[S.PROMPT_ID]),
        S.ZERO_VARIANCE_STEPS: by[S.ZERO_VARIANCE].sum().astype(np.int64),
        S.PASS_RATE: by[S.PASS_RATE].mean(),
        S.stat(S.REWARD, "mean"): by[S.stat(S.REWARD, "mean")].mean(),
        "last_step": by[S.STEP].max()})
    last_low = step.where(rate <= REGRESSED_BELOW).groupby(steps[S.PROMPT_ID]).max()
    table = _with_flags(table, by[S.PASS_RATE], last_low)
    table.insert(0, S.PROMPT, previews.reindex(table.index))
    return table


def _with_flags(table: pd.DataFrame, rates: pd.core.groupby.SeriesGroupBy,
                last_low: pd.Series) -> pd.DataFrame:
    enough = table[S.STEPS_SEEN] >= MIN_STEPS
    flags = dict(zip(S.PROMPT_FLAGS, (
        rates.max() <= 0.0,
        rates.min() >= 1.0,
        last_low.reindex(table.index) > table[S.FIRST_SOLVED],
        table[S.ZERO_VARIANCE_STEPS] == table[S.STEPS_SEEN],
        (table[S.PASS_TREND] > 0) & table[S.FIRST_SOLVED].notna())))
    for name, flag in flags.items():
        table[name] = enough & flag.fillna(False).astype(bool)
    category = np.select([table[name] for name in flags], list(flags), "other")
    table[S.PROMPT_CATEGORY] = np.where(enough, category, S.SEEN_ONCE)
    return table


def _slopes(x: pd.Series, y: pd.Series, keys: pd.Series) -> pd.Series:
    """Least-squares slope of y on x within each key (NaN for fewer than two x values)."""
    frame = pd.DataFrame({"x": x, "y": y, "xx": x * x, "xy": x * y})
    sums = frame.groupby(keys.to_numpy(), sort=False).sum()
    n = frame.groupby(keys.to_numpy(), sort=False).size()
    denominator = n * sums["xx"] - sums["x"] ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = (n * sums["xy"] - sums["x"] * sums["y"]) / denominator
    return slope.where(denominator > 1e-9)


def previews(samples: pd.DataFrame) -> pd.Series:
    """The first prompt preview of each prompt id."""
    first = samples.drop_duplicates(S.PROMPT_ID)
    return pd.Series(first[S.PROMPT].to_numpy(), index=first[S.PROMPT_ID].to_numpy())
