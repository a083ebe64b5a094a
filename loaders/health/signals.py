"""Per-step health signals, from the trainer's metrics first and the dump second.

A signal computed from the dump is a mean (or a share) over the step's samples, so it comes
with its standard error (schema.h_se) and the step's sample count (schema.H_SAMPLES): the
rules judge a step of 8 samples by what 8 samples can tell.  Only trained samples count:
left-out (filtered, aborted) and validation samples never enter a training signal.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.groups.clusters import CLUSTERS_PER_100, LARGEST_SHARE, diversity_by_step
from loaders.groups.table import zero_variance
from loaders.health.views import memory_columns
from loaders.index.steps import finite
from loaders.metric_names import (
    DUMP_TOKEN_MEANS,
    IS_SHARE_HIGH,
    IS_SHARE_LOW,
    MEMORY_SIGNALS,
    SIGNALS,
    metric_for,
)

HEAVY_REPETITION = 0.5  # a response repeating half its 4-grams is stuck in a loop
# signals that are shares of the step's samples (or tokens): a trainer's ratio of these
# gets the binomial error of the dump's n at that step when it has none of its own
SHARES = (S.H_ABORT, S.H_TIMEOUT, S.H_TRUNCATION, S.H_IS_OUTSIDE, S.H_ZERO_VARIANCE,
          S.H_REPETITIVE)


def _from_metrics(metrics: pd.DataFrame) -> pd.DataFrame:
    names = [str(c) for c in metrics.columns]
    out = pd.DataFrame(index=metrics.index)
    for signal in SIGNALS:
        name = metric_for(names, signal)
        if name is not None:
            out[signal] = metrics[name]
    shares = [metrics[n] for kind in (IS_SHARE_HIGH, IS_SHARE_LOW)
              if (n := metric_for(names, kind)) is not None]
    if shares:
        out[S.H_IS_OUTSIDE] = sum(s.fillna(0) for s in shares).where(shares[0].notna())
    groups = memory_columns(metrics)
    for signal, kinds in MEMORY_SIGNALS.items():
        columns = next((groups[k] for k in kinds if k in groups), None)
        if columns:  # the busiest device decides the risk
            out[signal] = metrics[columns].max(axis=1)
    return out


# every column of the dump that health_signals and the rules read
HEALTH_COLUMNS = (S.STEP, S.REWARD, S.RESPONSE_LEN, S.kl_mean(S.K3), *DUMP_TOKEN_MEANS.values(),
                  S.TRUNCATED, S.REPETITION, S.GROUP_ID, S.RANK, S.EXCLUDED, S.VALIDATION,
                  S.POLICY_LAG, *S.SIGNATURES)


def trained_rows(samples: pd.DataFrame) -> pd.DataFrame:
    """The samples a training signal may count: not left out, not validation."""
    keep = np.ones(len(samples), dtype=bool)
    for flag in (S.EXCLUDED, S.VALIDATION):
        if flag in samples:
            keep &= ~samples[flag].to_numpy(dtype=bool)
    return samples[keep] if not keep.all() else samples


def _mean_se(grouped: pd.core.groupby.DataFrameGroupBy, column: str) -> tuple[pd.Series,
                                                                           pd.Series]:
    stats = grouped[column].agg(["mean", "std", "count"])
    return stats["mean"], stats["std"] / np.sqrt(stats["count"])


def _share_se(flags: pd.Series, steps: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Share of True per step and its binomial standard error; (k + ½)/(n + 1) keeps the
    error above 0 when no sample (or every one) is flagged."""
    stats = flags.astype(np.float64).groupby(steps).agg(["mean", "sum", "count"])
    p = (stats["sum"] + 0.5) / (stats["count"] + 1)
    return stats["mean"], np.sqrt(p * (1 - p) / stats["count"])


def _from_dump(samples: pd.DataFrame) -> pd.DataFrame:
    grouped = samples.groupby(S.STEP)
    out = pd.DataFrame({S.H_SAMPLES: grouped.size().astype(np.float64)})
    means = {S.H_REWARD: S.REWARD, S.H_LENGTH: S.RESPONSE_LEN, S.H_TOKEN_KL: S.kl_mean(S.K3),
             **{signal: column for signal, column in DUMP_TOKEN_MEANS.items()
                if column in samples and samples[column].notna().any()}}
    by_step = finite(samples[list(means.values())]).groupby(samples[S.STEP])  # as step_stats
    for signal, column in means.items():
        out[signal], out[S.h_se(signal)] = _mean_se(by_step, column)
    out[S.H_TOKENS] = grouped[S.RESPONSE_LEN].sum().astype(np.float64)
    out[S.h_se(S.H_TOKENS)] = out[S.h_se(S.H_LENGTH)] * out[S.H_SAMPLES]
    steps = samples[S.STEP]
    out[S.H_TRUNCATION], out[S.h_se(S.H_TRUNCATION)] = _share_se(samples[S.TRUNCATED], steps)
    if S.REPETITION in samples:
        out[S.H_REPETITIVE], out[S.h_se(S.H_REPETITIVE)] = _share_se(
            samples[S.REPETITION] >= HEAVY_REPETITION, steps)
    if S.POLICY_LAG in samples and samples[S.POLICY_LAG].notna().any():  # async RL
        lag = samples[S.POLICY_LAG].groupby(steps)
        out[S.H_LAG_MAX], out[S.H_LAG_P90] = lag.max(), lag.quantile(0.9)
    if all(name in samples for name in S.SIGNATURES):
        out = out.join(diversity_signals(samples), how="left")
    out = out.join(group_signals(samples), how="left")
    out[S.H_KL], out[S.H_REF_KL] = out[S.H_TOKEN_KL], out[S.H_TOKEN_KL]
    for name in (S.H_KL, S.H_REF_KL):
        out[S.h_se(name)] = out[S.h_se(S.H_TOKEN_KL)]
    return out


def diversity_signals(samples: pd.DataFrame) -> pd.DataFrame:
    """Per step, its near-duplicate response clusters per 100 responses and the largest
    cluster's share, each with its binomial error (loaders.groups.clusters)."""
    out = diversity_by_step(samples[S.STEP].to_numpy(), samples[list(S.SIGNATURES)].to_numpy(
        np.int64)).rename(columns={CLUSTERS_PER_100: S.H_CLUSTERS,
                                   LARGEST_SHARE: S.H_LARGEST_CLUSTER})
    n = samples.groupby(S.STEP).size().reindex(out.index).astype(np.float64)
    for name, scale in ((S.H_LARGEST_CLUSTER, 1.0), (S.H_CLUSTERS, 100.0)):  # both shares
        p = (out[name] / scale * n + 0.5) / (n + 1)  # of the step's responses: binomial
        out[S.h_se(name)] = scale * np.sqrt(p * (1 - p) / n)
    return out


def group_signals(samples: pd.DataFrame, min_group: int = 2) -> pd.DataFrame:
    """Per step, over the GRPO groups of ≥ min_group samples (schema.GROUP_ID, the ids the
    Groups page uses): how many, the share whose rewards are all equal, and the mean
    within-group reward std, each share and mean with its standard error."""
    # over finite rewards, flat as the Groups page judges it (loaders.groups.table)
    by = finite(samples[S.REWARD]).groupby([samples[S.STEP], samples[S.GROUP_ID]])
    groups = by.agg(["count", "min", "max", "std"])
    groups = groups[groups["count"] >= min_group]
    flat = zero_variance(groups["count"], groups["min"], groups["max"]).astype(np.float64)
    steps = groups.index.get_level_values(0)
    out = pd.DataFrame({S.H_GROUPS: flat.groupby(steps).size().astype(np.float64)})
    out[S.H_ZERO_VARIANCE], out[S.h_se(S.H_ZERO_VARIANCE)] = _share_se(flat > 0,
                                                                       pd.Series(steps, flat.index))
    spread = groups["std"].fillna(0.0).groupby(steps).agg(["mean", "std"])
    out[S.H_GROUP_STD] = spread["mean"]
    out[S.h_se(S.H_GROUP_STD)] = spread["std"] / np.sqrt(out[S.H_GROUPS])
    return out


def zero_variance_share(samples: pd.DataFrame, min_group: int = 2) -> pd.Series:
    """Per step, the share of prompt groups (≥ min_group samples) whose rewards are equal."""
    return group_signals(samples, min_group)[S.H_ZERO_VARIANCE]


def group_counts(samples: pd.DataFrame, min_group: int = 2) -> pd.Series:
    """Per step, how many prompt groups have at least min_group samples."""
    return group_signals(samples, min_group)[S.H_GROUPS]


def dump_signals(samples: pd.DataFrame | None) -> pd.DataFrame | None:
    """The signals the dump's trained samples imply, by step (None: no such sample)."""
    if samples is None or samples.empty:
        return None
    trained = trained_rows(samples)
    return _from_dump(trained) if not trained.empty else None


def health_signals(metrics: pd.DataFrame | None, samples: pd.DataFrame | None) -> pd.DataFrame:
    """One row per step; the trainer's metrics win over what the dump implies (and then the
    dump's standard error, which is about the dump's samples, is dropped with its value)."""
    return signals_of(metrics, dump_signals(samples))


def signals_of(metrics: pd.DataFrame | None, dump: pd.DataFrame | None) -> pd.DataFrame:
    """health_signals, from the dump's signals (dump_signals) already made."""
    parts = []
    if metrics is not None and not metrics.empty:
        parts.append(_from_metrics(metrics))
    if dump is not None:
        parts.append(dump.copy())
    if not parts:
        return pd.DataFrame(index=pd.Index([], name=S.STEP))
    signals = parts[0]
    for part in parts[1:]:
        for name in signals.columns.intersection(part.columns):
            if S.h_se(name) in part:  # the metric's value stands; the dump's error does not
                part[S.h_se(name)] = part[S.h_se(name)].where(signals[name].reindex(
                    part.index).isna())
        signals = signals.combine_first(part)
    signals.index.name = S.STEP
    return _share_errors(signals.sort_index().astype(np.float64))


def _share_errors(signals: pd.DataFrame) -> pd.DataFrame:
    """A share the trainer logged (abort ratio, say) is over the step's batch: its binomial
    error at the dump's n, where the dump has the step."""
    if S.H_SAMPLES not in signals:
        return signals
    n = signals[S.H_SAMPLES]
    for name in SHARES:
        if name in signals:
            p = (signals[name] * n + 0.5) / (n + 1)
            binomial = np.sqrt(p * (1 - p) / n)
            known = signals.get(S.h_se(name), pd.Series(np.nan, index=signals.index))
            signals[S.h_se(name)] = known.fillna(binomial)
    return signals
