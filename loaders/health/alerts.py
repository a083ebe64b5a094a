"""Alert rules evaluated per step over the health signals (and per rank over the dump)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.health.robust import deviation, rolling_median

STRONG, WEAK = "strong", "weak"


@dataclass(frozen=True)
class Alert:
    rule: str
    severity: str  # "strong" or "weak"
    step: int
    evidence: dict = field(default_factory=dict)  # the values behind the alert

    def as_dict(self) -> dict:
        return {"rule": self.rule, "severity": self.severity, "step": self.step,
                "evidence": self.evidence}


def rounded(value: object) -> float | None:
    value = float(value)
    return round(value, 6) if math.isfinite(value) else None


def score_of(signals: pd.DataFrame, name: str, cfg: dict) -> pd.Series:
    if name not in signals or signals[name].notna().sum() == 0:
        return pd.Series(np.nan, index=signals.index)
    base = cfg["baseline"]
    return deviation(signals[name], int(base["window"]), int(base["min_history"]),
                     base["rel_floor"])


def evidence_for(signals: pd.DataFrame, step: int, names: tuple[str, ...], cfg: dict) -> dict:
    out = {}
    base = cfg["baseline"]
    for name in names:
        if name in signals:
            median = rolling_median(signals[name], int(base["window"]), int(base["min_history"]))
            out[name] = rounded(signals.at[step, name])
            out[f"{name}_baseline"] = rounded(median.at[step])
    return out


def divergence(signals: pd.DataFrame, cfg: dict) -> list[Alert]:
    """KL spike AND grad-norm spike AND entropy collapse (within slack steps) is strong."""
    k, slack = cfg["divergence"]["k"], int(cfg["divergence"]["same_step_slack"])
    hits = pd.DataFrame({
        S.H_KL: score_of(signals, S.H_KL, cfg) > k,
        S.H_GRAD_NORM: score_of(signals, S.H_GRAD_NORM, cfg) > k,
        S.H_ENTROPY: score_of(signals, S.H_ENTROPY, cfg) < -k,
    })
    near = hits.rolling(2 * slack + 1, center=True, min_periods=1).max().astype(bool)
    alerts = []
    for step, row in hits.iterrows():
        if not row.any():
            continue
        together = near.loc[step].sum()
        evidence = evidence_for(signals, step, tuple(hits.columns), cfg)
        evidence["signals"] = [name for name in hits.columns if row[name]]
        alerts.append(Alert("divergence", STRONG if together == 3 else WEAK, int(step),
                            evidence))
    return alerts


def memory_risk(signals: pd.DataFrame, cfg: dict) -> list[Alert]:
    """Reserved memory near the total while the reserved-allocated gap widens."""
    needed = (S.H_MEM_RESERVED, S.H_MEM_ALLOCATED, S.H_MEM_TOTAL)
    if not all(n in signals for n in needed):
        return []
    rule = cfg["memory"]
    fraction = signals[S.H_MEM_RESERVED] / signals[S.H_MEM_TOTAL]
    gap = signals[S.H_MEM_RESERVED] - signals[S.H_MEM_ALLOCATED]
    widening = gap.diff().gt(0).rolling(int(rule["gap_growth_steps"])).sum() >= int(
        rule["gap_growth_steps"])
    alerts = []
    for step in signals.index[(fraction >= rule["reserved_fraction"]) & widening]:
        alerts.append(Alert("memory_risk", STRONG, int(step), {
            "reserved_fraction": rounded(fraction.at[step]), "gap": rounded(gap.at[step]),
            **evidence_for(signals, step, needed, cfg)}))
    return alerts


def _spike_rule(rule: str, signal: str, signals: pd.DataFrame, cfg: dict, k: float,
                min_ratio: float, floor: float = 0.0) -> list[Alert]:
    """A single-signal spike that is also at least min_ratio × its baseline (and ≥ floor)."""
    if signal not in signals:
        return []
    score = score_of(signals, signal, cfg)
    base = cfg["baseline"]
    median = rolling_median(signals[signal], int(base["window"]), int(base["min_history"]))
    big = (signals[signal] >= min_ratio * median) & (signals[signal] >= floor)
    return [Alert(rule, STRONG if score.at[s] > 2 * k else WEAK, int(s),
                  evidence_for(signals, s, (signal,), cfg))
            for s in signals.index[(score > k) & big]]


def batch_runaway(signals: pd.DataFrame, cfg: dict) -> list[Alert]:
    rule = cfg["batch_runaway"]
    return _spike_rule("batch_runaway", S.H_TOKENS, signals, cfg, rule["k"], rule["min_ratio"])


def inference_anomalies(signals: pd.DataFrame, cfg: dict) -> list[Alert]:
    rule = cfg["inference"]
    return [alert for signal in (S.H_ABORT, S.H_TIMEOUT, S.H_TRUNCATION)
            for alert in _spike_rule("inference_anomaly", signal, signals, cfg, rule["k"], 1.0,
                                     floor=rule["min_ratio"])]
