"""The alert rules that compare signals with their trends, and the one entry point."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.health.alerts import STRONG, Alert, Drill, Scored, Test, hits_of, severities
from loaders.health.incidents import into_incidents
from loaders.health.special import (
    diversity_collapse,
    imbalanced_ranks,
    memory_risk,
    reward_hacking,
    trained_rank_tokens,
    zero_variance,
)
from loaders.health.staleness import stale_policy
from loaders.metric_names import DUMP_TOKEN_MEANS

Gate = Callable[[Scored, Test, dict], pd.Series]  # where a test may count at all


@dataclass(frozen=True)
class TrendRule:
    name: str
    table: str  # its settings in the config (alerts.toml)
    tests: tuple[Test, ...]
    drill: Drill
    alone: int = 0  # only the first `alone` tests raise an alert by themselves (0: all)
    gate: Gate | None = None
    # whether its tests measure different things (an optimiser's KL, its grad norm, the
    # entropy): only then does their agreement make an alert strong. Shares computed from
    # the same samples or token ratios (repetition and truncation, mismatch KL and the
    # importance ratio) move together on noise too.
    independent: bool = True


def _at_least_ratio(scored: Scored, test: Test, rule: dict) -> pd.Series:
    """Inference ratios: the value itself is at least min_ratio."""
    return scored.signals[test.signal] >= rule["min_ratio"]


def _runaway(scored: Scored, test: Test, rule: dict) -> pd.Series:
    """Tokens: at least min_ratio × what the trend expected."""
    found = scored.baseline(test.signal)
    return scored.signals[test.signal] >= rule["min_ratio"] * found.expected


def _enough_groups(scored: Scored, test: Test, rule: dict) -> pd.Series:
    groups = scored.signals.get(S.H_GROUPS, pd.Series(0.0, index=scored.signals.index))
    return groups.fillna(0) >= rule["min_groups"]


KL_DRILL = Drill(S.kl_mean(S.K3))
LENGTH_DRILL = Drill(S.RESPONSE_LEN)
TREND_RULES = (
    TrendRule("divergence", "divergence", (Test(S.H_KL, 1), Test(S.H_GRAD_NORM, 1),
                                           Test(S.H_ENTROPY, -1)), KL_DRILL),
    TrendRule("kl_drift", "kl_drift", (Test(S.H_REF_KL, 1),), KL_DRILL),
    TrendRule("batch_runaway", "batch_runaway", (Test(S.H_TOKENS, 1),), LENGTH_DRILL,
              gate=_runaway),
    TrendRule("inference_anomaly", "inference", (Test(S.H_ABORT, 1), Test(S.H_TIMEOUT, 1),
                                                 Test(S.H_TRUNCATION, 1)), LENGTH_DRILL,
              gate=_at_least_ratio),
    TrendRule("train_inference_mismatch", "mismatch",
              (Test(S.H_MISMATCH_KL, 1), Test(S.H_IS_RATIO, 0), Test(S.H_IS_OUTSIDE, 1)),
              Drill(DUMP_TOKEN_MEANS[S.H_MISMATCH_KL]), independent=False),
    # a truncation rise alone is an inference anomaly; beside repetition it is the loop
    # running into the length cap without an end-of-sequence token
    TrendRule("degenerate_output", "degenerate",
              (Test(S.H_REPETITIVE, 1), Test(S.H_TRUNCATION, 1)), Drill(S.REPETITION), alone=1,
              independent=False),
    TrendRule("group_collapse", "group_collapse",
              (Test(S.H_ZERO_VARIANCE, 1), Test(S.H_GROUP_STD, -1)),
              Drill(group_flag=S.ZERO_VARIANCE), gate=_enough_groups, independent=False),
)


def trend_rule(rule: TrendRule, scored: Scored, cfg: dict) -> list[Alert]:
    settings = cfg[rule.table]
    z = pd.DataFrame({t.signal: _gated(rule, t, scored, settings) for t in rule.tests})
    z = z.loc[:, z.notna().any()]
    if z.empty:
        return []
    severity = severities(z, settings["k"], settings["extreme"], cfg, rule.independent,
                          scored.mature(list(z.columns)))
    alone = [t.signal for t in rule.tests[: rule.alone or len(rule.tests)] if t.signal in z]
    if not alone:  # only agreeing signals of this rule were logged
        return []
    hits = hits_of(z, settings["k"], cfg["severity"]["sustained"])
    raised = hits[alone].any(axis=1)
    alerts = []
    names = tuple(t.signal for t in rule.tests)
    for step in z.index[(severity != "") & raised]:
        evidence = scored.evidence(step, names)
        evidence["signals"] = [n for n in z.columns if hits.at[step, n]]
        alerts.append(Alert(rule.name, severity.at[step], int(step), evidence,
                            float(np.nanmax(z.loc[step].to_numpy())), drill=rule.drill))
    return alerts


def _gated(rule: TrendRule, test: Test, scored: Scored, settings: dict) -> pd.Series:
    z = scored.z(test)
    if rule.gate is None or test.signal not in scored.signals:
        return z
    return z.where(rule.gate(scored, test, settings).fillna(False))


def evaluate(signals: pd.DataFrame, samples: pd.DataFrame | None, cfg: dict) -> list[Alert]:
    """Every rule, grouped into incidents, sorted by step then severity (strong first)."""
    return evaluated(signals, trained_rank_tokens(samples), cfg)


def evaluated(signals: pd.DataFrame, ranks: tuple[pd.DataFrame, pd.DataFrame] | None,
              cfg: dict) -> list[Alert]:
    """evaluate, from the per-rank tokens (special.trained_rank_tokens) already made."""
    scored = Scored(signals, cfg)
    alerts = [a for rule in TREND_RULES for a in trend_rule(rule, scored, cfg)]
    alerts += (memory_risk(scored, cfg) + reward_hacking(scored, cfg)
               + diversity_collapse(scored, cfg)
               + zero_variance(scored, cfg) + imbalanced_ranks(ranks, cfg)
               + stale_policy(scored, cfg))
    alerts = into_incidents(alerts, int(cfg["incidents"]["max_gap"]))
    return sorted(alerts, key=lambda a: (a.step, a.severity != STRONG, a.rule, a.key))
