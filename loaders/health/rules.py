"""The remaining alert rules and the one entry point that runs them all."""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.health.alerts import (
    STRONG,
    WEAK,
    Alert,
    batch_runaway,
    divergence,
    evidence_for,
    inference_anomalies,
    memory_risk,
    rounded,
    score_of,
)


def reward_hacking(signals: pd.DataFrame, cfg: dict) -> list[Alert]:
    """Reward rising while response length explodes or per-token KL rises sharply."""
    rule = cfg["reward_hacking"]
    if S.H_REWARD not in signals:
        return []
    window = int(rule["reward_window"])
    rising = signals[S.H_REWARD].diff(window) > 0
    alerts = []
    for signal in (S.H_LENGTH, S.H_TOKEN_KL):
        exploding = score_of(signals, signal, cfg) > rule["k"]
        for step in signals.index[rising & exploding]:
            evidence = evidence_for(signals, step, (S.H_REWARD, signal), cfg)
            evidence["reward_change"] = rounded(signals[S.H_REWARD].diff(window).at[step])
            alerts.append(Alert("reward_hacking", STRONG, int(step), evidence))
    return alerts


def zero_variance(signals: pd.DataFrame, cfg: dict) -> list[Alert]:
    """The share of GRPO groups whose samples all got the same reward (no learning signal)."""
    rule = cfg["zero_variance"]
    if S.H_ZERO_VARIANCE not in signals:
        return []
    share = signals[S.H_ZERO_VARIANCE]
    groups = signals.get(S.H_GROUPS, pd.Series(np.inf, index=signals.index)).fillna(0)
    alerts = []
    for step in share.index[(share >= rule["warn_share"]) & (groups >= rule["min_groups"])]:
        severity = STRONG if share.at[step] >= rule["strong_share"] else WEAK
        alerts.append(Alert("zero_variance_groups", severity, int(step),
                            {S.H_ZERO_VARIANCE: rounded(share.at[step]),
                             S.H_GROUPS: rounded(groups.at[step])}))
    return alerts


def rank_imbalance(samples: pd.DataFrame | None, cfg: dict) -> list[Alert]:
    """One rank's token count far from the median rank of the same step."""
    rule = cfg["rank_imbalance"]
    if samples is None or samples.empty:
        return []
    tokens = samples.groupby([S.STEP, S.RANK])[S.RESPONSE_LEN].sum().unstack()
    if tokens.shape[1] < rule["min_ranks"]:
        return []
    median = tokens.median(axis=1)
    mad = tokens.sub(median, axis=0).abs().median(axis=1) * 1.4826
    limit = pd.concat([rule["rel"] * median, rule["k"] * mad], axis=1).max(axis=1)
    off = tokens.sub(median, axis=0).abs().gt(limit, axis=0).stack()
    return [Alert("rank_imbalance", WEAK, int(step), {
        "rank": int(rank), S.H_TOKENS: rounded(tokens.at[step, rank]),
        "median_rank_tokens": rounded(median.at[step])})
        for step, rank in off[off].index]


def evaluate(signals: pd.DataFrame, samples: pd.DataFrame | None, cfg: dict) -> list[Alert]:
    """Every rule, sorted by step then severity (strong first)."""
    alerts = (divergence(signals, cfg) + memory_risk(signals, cfg)
              + batch_runaway(signals, cfg) + inference_anomalies(signals, cfg)
              + reward_hacking(signals, cfg) + zero_variance(signals, cfg)
              + rank_imbalance(samples, cfg))
    return sorted(alerts, key=lambda a: (a.step, a.severity != STRONG, a.rule))
