"""Per-step health signals, from the trainer's metrics first and the dump second."""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.health.views import memory_columns
from loaders.metric_names import MEMORY_SIGNALS, SIGNALS, metric_for


def _from_metrics(metrics: pd.DataFrame) -> pd.DataFrame:
    names = [str(c) for c in metrics.columns]
    out = pd.DataFrame(index=metrics.index)
    for signal in SIGNALS:
        name = metric_for(names, signal)
        if name is not None:
            out[signal] = metrics[name]
    groups = memory_columns(metrics)
    for signal, kinds in MEMORY_SIGNALS.items():
        columns = next((groups[k] for k in kinds if k in groups), None)
        if columns:  # the busiest device decides the risk
            out[signal] = metrics[columns].max(axis=1)
    return out


def _from_dump(samples: pd.DataFrame) -> pd.DataFrame:
    grouped = samples.groupby(S.STEP)
    out = pd.DataFrame({
        S.H_REWARD: grouped[S.REWARD].mean(),
        S.H_LENGTH: grouped[S.RESPONSE_LEN].mean(),
        S.H_TOKENS: grouped[S.RESPONSE_LEN].sum().astype(float),
        S.H_TOKEN_KL: grouped[S.kl_mean(S.K3)].mean(),
        S.H_TRUNCATION: grouped[S.TRUNCATED].mean(),
        S.H_ZERO_VARIANCE: zero_variance_share(samples),
        S.H_GROUPS: group_counts(samples),
    })
    if "entropy_mean" in samples:
        out[S.H_ENTROPY] = grouped["entropy_mean"].mean()
    out[S.H_KL] = out[S.H_TOKEN_KL]
    return out


def zero_variance_share(samples: pd.DataFrame, min_group: int = 2) -> pd.Series:
    """Per step, the share of prompt groups (≥ min_group samples) whose rewards are equal."""
    groups = samples.groupby([S.STEP, S.GROUP_ID])[S.REWARD].agg(["count", "min", "max"])
    groups = groups[groups["count"] >= min_group]
    flat = (groups["max"] - groups["min"]).abs() < 1e-12
    return flat.groupby(level=0).mean()


def group_counts(samples: pd.DataFrame, min_group: int = 2) -> pd.Series:
    """Per step, how many prompt groups have at least min_group samples."""
    sizes = samples.groupby([S.STEP, S.GROUP_ID]).size()
    return (sizes >= min_group).groupby(level=0).sum().astype(float)


def health_signals(metrics: pd.DataFrame | None, samples: pd.DataFrame | None) -> pd.DataFrame:
    """One row per step; the trainer's metrics win over what the dump implies."""
    parts = []
    if metrics is not None and not metrics.empty:
        parts.append(_from_metrics(metrics))
    if samples is not None and not samples.empty:
        parts.append(_from_dump(samples))
    if not parts:
        return pd.DataFrame(index=pd.Index([], name=S.STEP))
    signals = parts[0]
    for part in parts[1:]:
        signals = signals.combine_first(part)
    signals.index.name = S.STEP
    return signals.sort_index().astype(np.float64)
