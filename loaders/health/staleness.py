"""Off-policy staleness of an async run: how many updates behind its training step the policy
that generated each sample was (schema.POLICY_LAG), per step and by lag.

A lag explains a KL or mismatch spike better than anything else in an async run: the samples
of a lag-3 batch were drawn by weights three updates old.  These tables are made over the
index's numbers (a served run reads a few steps at a time), never over held samples.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.health.alerts import STRONG, WEAK, Alert, Drill, Scored, rounded
from loaders.index.numbers import Numbers, stacked

MAX_LAG_BIN = 8  # lags past this share one bin ("8+"): a stacked bar stays readable
LAG_READS = (S.STEP, S.POLICY_LAG, S.POLICY_SPAN)
MIXED = "mixed-version share"  # samples whose generation spanned several policy versions
FACTS = ("lag mean", "lag max", MIXED)  # lag_shares' columns that are not a lag bin


def lag_bins(lags: pd.Series) -> pd.Series:
    """Each known lag as its bin's label: "0", "1", …, "8+" (negative lags, a version newer
    than the step, are their own bin: a clock or numbering problem worth seeing)."""
    known = lags.dropna()
    whole = known.round().astype(np.int64)
    labels = whole.clip(upper=MAX_LAG_BIN).astype(str)
    labels[whole >= MAX_LAG_BIN] = f"{MAX_LAG_BIN}+"
    labels[whole < 0] = "< 0"
    return labels


def lag_shares(rows: pd.DataFrame) -> pd.DataFrame:
    """Per step: the share of its samples (with a known lag) in each lag bin, the lag's mean
    and max, and the mixed-version share."""
    rows = rows[rows[S.POLICY_LAG].notna()]
    if rows.empty:
        return pd.DataFrame(index=pd.Index([], name=S.STEP, dtype="int64"))
    bins = lag_bins(rows[S.POLICY_LAG])
    shares = pd.crosstab(rows[S.STEP], bins, normalize="index")
    grouped = rows.groupby(S.STEP)
    shares["lag mean"] = grouped[S.POLICY_LAG].mean()
    shares["lag max"] = grouped[S.POLICY_LAG].max()
    shares[MIXED] = (rows[S.POLICY_SPAN] > 0).groupby(rows[S.STEP]).mean()
    return shares


def lag_shares_of(numbers: Numbers) -> pd.DataFrame:
    """lag_shares over a served run, a few steps at a time (bins the run's chunks share)."""
    parts = [p for p in numbers.per_step(LAG_READS, lag_shares) if not p.empty]
    if not parts:
        return lag_shares(pd.DataFrame({n: pd.Series([], dtype="float64") for n in LAG_READS}))
    table = stacked(parts)
    bins = sorted((c for c in table.columns if c not in FACTS), key=_bin_order)
    table[bins] = table[bins].fillna(0.0)  # a bin no sample of a chunk's steps fell in
    return table[[*bins, *FACTS]]


def by_lag(rows: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """One step's samples by lag bin: how many, and each metric's mean (the KL, mismatch and
    importance-ratio means, where the run has them)."""
    rows = rows[rows[S.POLICY_LAG].notna()]
    bins = lag_bins(rows[S.POLICY_LAG])
    kept = [m for m in metrics if m in rows.columns]
    table = rows[kept].groupby(bins).mean()
    table.insert(0, "samples", bins.value_counts())
    order = sorted(table.index, key=_bin_order)
    return table.loc[order].rename_axis("policy lag")


def _bin_order(label: str) -> int:
    return -1 if label == "< 0" else int(label.rstrip("+"))


def has_lag(columns: pd.Index | list[str], stats: pd.DataFrame) -> bool:
    """The run says a policy version for some sample (its step stats have a lag)."""
    name = S.stat(S.POLICY_LAG, "mean")
    return S.POLICY_LAG in columns and name in stats and stats[name].notna().any()


def stale_policy(scored: Scored, cfg: dict) -> list[Alert]:
    """A step whose stalest sample is more than max_lag policy updates old: weak; strong when
    its 90th percentile lag is past the bound too (a tenth of the step, not one straggler)."""
    signals, bound = scored.signals, cfg["stale_policy"]["max_lag"]
    if S.H_LAG_MAX not in signals:
        return []
    top, p90 = signals[S.H_LAG_MAX], signals[S.H_LAG_P90]
    return [Alert("stale_policy", STRONG if p90.at[step] > bound else WEAK, int(step),
                  {**scored.evidence(step, ()), S.H_LAG_MAX: rounded(top.at[step]),
                   S.H_LAG_P90: rounded(p90.at[step]), "max_lag": bound}, float(top.at[step]),
                  drill=Drill(S.POLICY_LAG))
            for step in signals.index[(top > bound).fillna(False).to_numpy()]]
