"""What an alert is, and how a rule's tests turn into alerts of the right severity.

A rule is one or more tests, each a health signal compared with its robust trend
(loaders.health.robust) in one direction. A step where a test passes `k` spreads (or
`sustained` × k two steps running, or ¾ of that three) is a hit. A hit alone is weak. It
is strong when independent signals agree (see severities) or when one signal is extreme
(`extreme` spreads) and has hit for `persist` steps in a row: one metric's wobble is not
an incident.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.health.robust import Baseline, trend_baseline
from loaders.health.signals import SHARES

STRONG, WEAK = "strong", "weak"


@dataclass(frozen=True)
class Drill:
    """Where an alert's evidence shows: its step's samples sorted by a summary column, the
    step's groups filtered by a flag, or (no sample shows it) a Health panel."""
    column: str = ""
    descending: bool = True
    group_flag: str = ""
    health_panel: str = ""


@dataclass(frozen=True)
class Alert:
    rule: str
    severity: str  # "strong" or "weak"
    step: int
    evidence: dict = field(default_factory=dict)  # the values behind the alert
    score: float = 0.0  # spreads past the trend: an incident's peak is its largest
    key: str = ""  # what tells two incidents of one rule apart at the same steps (a rank)
    drill: Drill = Drill()
    incident: str = ""  # the id of the incident the alert belongs to (loaders.health.incidents)
    incident_start: int | None = None

    def as_dict(self) -> dict:
        return {"rule": self.rule, "severity": self.severity, "step": self.step,
                "incident": self.incident, "incident_start": self.incident_start,
                "evidence": self.evidence}


@dataclass(frozen=True)
class Test:
    signal: str
    sign: int  # +1: a rise is the fault; -1: a fall; 0: either way


def rounded(value: object) -> float | None:
    value = float(value)
    return round(value, 6) if math.isfinite(value) else None


class Scored:
    """Each signal's trend baseline, computed once per evaluation and shared by the rules."""

    def __init__(self, signals: pd.DataFrame, cfg: dict) -> None:
        self.signals, self.cfg = signals, cfg
        self._done: dict[str, Baseline | None] = {}

    def baseline(self, name: str) -> Baseline | None:
        if name not in self._done:
            self._done[name] = self._compute(name)
        return self._done[name]

    def _compute(self, name: str) -> Baseline | None:
        if name not in self.signals or self.signals[name].notna().sum() == 0:
            return None
        base, values = self.cfg["baseline"], self.signals[name]
        se = self.signals.get(S.h_se(name))
        n = self.signals.get(S.H_SAMPLES) if se is not None else None
        found = trend_baseline(values, se, int(base["window"]), int(base["min_history"]),
                               base["rel_floor"], n)
        if name not in SHARES:
            return found
        # a share that sat at 0 has no spread: a point in `share_floor` is the least move
        spread = found.spread.clip(lower=base["share_floor"])
        return Baseline(found.expected, spread, (values - found.expected) / spread)

    def mature(self, names: list[str]) -> pd.DataFrame:
        """Per step and signal: a full `window` of earlier values. A young trend's spread
        comes from few steps and can be far too narrow by chance: one signal alone is
        not called strong against it."""
        window = int(self.cfg["baseline"]["window"])
        return pd.DataFrame({n: self.signals[n].notna().cumsum().shift(1, fill_value=0)
                             >= window for n in names}, index=self.signals.index)

    def z(self, test: Test) -> pd.Series:
        """The test's deviation in spreads, positive in the fault's direction."""
        found = self.baseline(test.signal)
        if found is None:
            return pd.Series(np.nan, index=self.signals.index)
        return found.score.abs() if test.sign == 0 else found.score * test.sign

    def evidence(self, step: int, names: tuple[str, ...]) -> dict:
        """Each signal's value, trend and deviation at the step, and the step's n."""
        out: dict[str, object] = {}
        if S.H_SAMPLES in self.signals and math.isfinite(self.signals.at[step, S.H_SAMPLES]):
            out["n"] = int(self.signals.at[step, S.H_SAMPLES])
        for name in names:
            found = self.baseline(name)
            if found is None:
                continue
            out[name] = rounded(self.signals.at[step, name])
            out[f"{name}_trend"] = rounded(found.expected.at[step])
            z = float(found.score.at[step])
            out[f"{name}_z"] = round(z, 2) if math.isfinite(z) else None
            se = self.signals.get(S.h_se(name))
            if se is not None and math.isfinite(se.at[step]):
                out[f"{name}_se"] = rounded(se.at[step])
        return out


def run_lengths(hit: np.ndarray) -> np.ndarray:
    """At each step, how many steps in a row up to it were hits (0 on a miss)."""
    out = np.zeros(hit.size, dtype=np.int64)
    for i, h in enumerate(hit):
        out[i] = out[i - 1] + 1 if h and i else int(h)
    return out


def run_peaks(z: np.ndarray, hit: np.ndarray) -> np.ndarray:
    """At each hit, the largest z of the run of hits it ends (0 on a miss)."""
    out = np.zeros(z.size)
    for i, h in enumerate(hit):
        out[i] = max(out[i - 1] if i else 0.0, z[i]) if h else 0.0
    return out


def hits_of(z: pd.DataFrame, k: float, sustained: float) -> pd.DataFrame:
    """k spreads at the step, or sustained × k at it and the step before, or ¾ of that
    three steps running: a shift that a mean of few samples shows only dimly still shows
    again and again (a lone burst does not)."""
    twice = (z >= sustained * k) & (z.shift(1) >= sustained * k)
    low = 0.75 * sustained * k
    thrice = (z >= low) & (z.shift(1) >= low) & (z.shift(2) >= low)
    return ((z >= k) | twice | thrice).fillna(False).astype(bool)


def severities(z: pd.DataFrame, k: float, extreme: float, cfg: dict,
               independent: bool = True, mature: pd.DataFrame | None = None) -> pd.Series:
    """Per step: "strong", "weak" or "" from the rule's tests' deviations (columns).

    Strong: three tests agree, or two agree and the rule hit the step before as well (a
    single step where two signals of one update burst together is not yet an incident);
    agreement counts only when the tests are `independent`. Or one test reached `extreme`
    in a run of at least `persist` steps at `k` (sustained hits alone never make one)
    against a `mature` trend."""
    persist, slack = int(cfg["severity"]["persist"]), int(cfg["severity"]["agree_slack"])
    hits = hits_of(z, k, cfg["severity"]["sustained"])
    any_hit = hits.any(axis=1)
    agreeing = hits.astype(np.int64).rolling(slack + 1, min_periods=1).max().sum(axis=1)
    confirmed = any_hit.shift(1, fill_value=False).astype(bool)
    agree = ((agreeing >= 3) | ((agreeing >= 2) & confirmed)) & independent
    held = pd.Series(False, index=z.index)
    for name in z.columns:
        full = (z[name] >= k).fillna(False).to_numpy(bool)
        long_enough = run_lengths(full) >= persist
        grown = True if mature is None else mature[name].to_numpy(bool)
        held |= long_enough & grown & (
            run_peaks(np.nan_to_num(z[name].to_numpy()), full) >= extreme)
    out = pd.Series("", index=z.index)
    out[any_hit] = WEAK
    out[any_hit & (agree | held)] = STRONG
    return out
