"""Rules with a shape of their own: reward hacking, memory, per-rank imbalance and the
zero-variance level of GRPO groups."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from numpy.lib.stride_tricks import sliding_window_view

from loaders import schema as S
from loaders.health.alerts import (
    STRONG,
    WEAK,
    Alert,
    Drill,
    Scored,
    Test,
    hits_of,
    rounded,
    run_lengths,
    run_peaks,
    severities,
)
from loaders.health.signals import trained_rows


def rise_t(values: pd.Series, window: int) -> pd.Series:
    """Per step, the t statistic of the least-squares slope over the last `window` steps
    (the step included): how sure the signal is rising, not just how much."""
    y = values.to_numpy(np.float64)
    x = values.index.to_numpy(np.float64)
    out = np.full(y.size, np.nan)
    if y.size < window:
        return pd.Series(out, values.index)
    ys, xs = sliding_window_view(y, window), sliding_window_view(x, window)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):  # inf stays NaN
        xc = xs - xs.mean(axis=1, keepdims=True)
        yc = ys - ys.mean(axis=1, keepdims=True)
        sxx = (xc ** 2).sum(axis=1)
        slope = (xc * yc).sum(axis=1) / sxx
        resid = yc - slope[:, None] * xc
        se = np.sqrt((resid ** 2).sum(axis=1) / (window - 2) / sxx)
        out[window - 1:] = slope / se
    return pd.Series(out, values.index)


def reward_hacking(scored: Scored, cfg: dict) -> list[Alert]:
    """Reward rising significantly while response length or KL to the reference climbs
    above its trend, for `persist` steps in a row; strong when both climb, or one is
    extreme."""
    return _while_reward_rises(
        "reward_hacking", (Test(S.H_LENGTH, 1), Test(S.H_REF_KL, 1)), scored, cfg,
        lambda hit: Drill(S.RESPONSE_LEN if S.H_LENGTH in hit else S.kl_mean(S.K3)))


def diversity_collapse(scored: Scored, cfg: dict) -> list[Alert]:
    """Reward rising significantly while the step's largest response cluster grows above
    its trend (and its clusters per 100 responses fall), for `persist` steps in a row: a
    policy that found one answer the grader likes answers with it (loaders.groups
    .clusters)."""
    return _while_reward_rises(
        "diversity_collapse", (Test(S.H_LARGEST_CLUSTER, 1), Test(S.H_CLUSTERS, -1)),
        scored, cfg, lambda hit: Drill(S.REWARD))


def _while_reward_rises(name: str, tests: tuple[Test, ...], scored: Scored, cfg: dict,
                        drill_of: Callable[[list[str]], Drill]) -> list[Alert]:
    """The tests' signals off their trends at steps where the reward rises significantly
    (slope t >= rise_t over reward_window steps, or 2 spreads above its trend); each alert
    leads where drill_of(the signals that hit) says."""
    rule, signals = cfg[name], scored.signals
    if S.H_REWARD not in signals:
        return []
    rise = rise_t(signals[S.H_REWARD], int(rule["reward_window"]))
    rising = (rise >= rule["rise_t"]) | (scored.z(Test(S.H_REWARD, 1)) >= 2.0)
    z = pd.DataFrame({t.signal: scored.z(t).where(rising) for t in tests})
    z = z.loc[:, z.notna().any()]
    if z.empty:
        return []
    severity = severities(z, rule["k"], rule["extreme"], cfg,
                          mature=scored.mature(list(z.columns)))
    hits = hits_of(z, rule["k"], cfg["severity"]["sustained"])
    held = run_lengths((severity != "").to_numpy()) >= int(cfg["severity"]["persist"])
    alerts = []
    for step in z.index[held]:
        evidence = scored.evidence(step, (S.H_REWARD, *z.columns))
        evidence["reward_rise_t"] = rounded(rise.at[step])
        hit = [n for n in z.columns if hits.at[step, n]]
        evidence["signals"] = hit
        alerts.append(Alert(name, severity.at[step], int(step), evidence,
                            float(np.nanmax(z.loc[step].to_numpy())), drill=drill_of(hit)))
    return alerts


def memory_risk(scored: Scored, cfg: dict) -> list[Alert]:
    """Reserved memory creeping above its trend (weak; strong when extreme and held), or
    near the device total while the reserved - allocated gap widens (strong)."""
    rule, signals = cfg["memory"], scored.signals
    if S.H_MEM_RESERVED not in signals:
        return []
    z = pd.DataFrame({S.H_MEM_RESERVED: scored.z(Test(S.H_MEM_RESERVED, 1))})
    severity = severities(z, rule["k"], rule["extreme"], cfg,
                          mature=scored.mature([S.H_MEM_RESERVED]))
    if S.H_MEM_TOTAL in signals and S.H_MEM_ALLOCATED in signals:
        fraction = signals[S.H_MEM_RESERVED] / signals[S.H_MEM_TOTAL]
        gap = signals[S.H_MEM_RESERVED] - signals[S.H_MEM_ALLOCATED]
        steps = int(rule["gap_growth_steps"])
        widening = gap.diff().gt(0).rolling(steps).sum() >= steps
        severity[(fraction >= rule["reserved_fraction"]) & widening] = STRONG
    names = (S.H_MEM_RESERVED, S.H_MEM_ALLOCATED, S.H_MEM_TOTAL)
    alerts = []
    for step in z.index[severity != ""]:
        evidence = scored.evidence(step, names)
        evidence["signals"] = [S.H_MEM_RESERVED]
        if S.H_MEM_TOTAL in signals:
            with np.errstate(invalid="ignore", divide="ignore"):  # inf / inf: not a number
                evidence["reserved_fraction"] = rounded(
                    signals.at[step, S.H_MEM_RESERVED] / signals.at[step, S.H_MEM_TOTAL])
        alerts.append(Alert("memory_risk", severity.at[step], int(step), evidence,
                            float(np.nan_to_num(z.at[step, S.H_MEM_RESERVED])),
                            drill=Drill(health_panel="Memory")))
    return alerts


def zero_variance(scored: Scored, cfg: dict) -> list[Alert]:
    """The share of GRPO groups whose samples all got the same reward (no learning signal),
    as a level: weak from warn_share, strong from strong_share held for `persist` steps."""
    rule, signals = cfg["zero_variance"], scored.signals
    if S.H_ZERO_VARIANCE not in signals:
        return []
    share = signals[S.H_ZERO_VARIANCE]
    groups = signals.get(S.H_GROUPS, pd.Series(np.inf, index=signals.index)).fillna(0)
    warn = ((share >= rule["warn_share"]) & (groups >= rule["min_groups"])).to_numpy()
    high = ((share >= rule["strong_share"]) & (groups >= rule["min_groups"])).to_numpy()
    held = run_lengths(high) >= int(cfg["severity"]["persist"])
    drill = Drill(group_flag=S.ZERO_VARIANCE)
    return [Alert("zero_variance_groups", STRONG if held[i] else WEAK, int(step),
                  {**scored.evidence(step, ()), S.H_ZERO_VARIANCE: rounded(share.at[step]),
                   S.H_GROUPS: rounded(groups.at[step])}, float(share.at[step]), drill=drill)
            for i, step in enumerate(signals.index) if warn[i]]


def rank_tokens(samples: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """step x rank: (tokens, deviation from the median rank in standard errors). A rank's
    tokens are a sum over its n samples, so their error is √n × a length std: the step's
    (its long tail of capped responses is what makes an honest rank look heavy), or the
    median rank's own when larger."""
    by = samples.groupby([S.STEP, S.RANK])[S.RESPONSE_LEN]
    tokens = by.sum().unstack().astype(np.float64)
    counts = by.size().unstack().astype(np.float64)
    spread = np.maximum(by.std().unstack().median(axis=1).fillna(0.0),
                        samples.groupby(S.STEP)[S.RESPONSE_LEN].std().fillna(0.0))
    deviation = tokens.sub(tokens.median(axis=1), axis=0)
    error = np.sqrt(counts).mul(spread, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = deviation / error  # identical lengths within ranks: any difference is real
    return tokens, z.where(error > 0, np.sign(deviation) * np.inf).where(deviation != 0, 0.0)


def trained_rank_tokens(samples: pd.DataFrame | None
                        ) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """rank_tokens of the trained samples (None: no sample)."""
    if samples is None or samples.empty:
        return None
    return rank_tokens(trained_rows(samples))


def rank_imbalance(samples: pd.DataFrame | None, cfg: dict) -> list[Alert]:
    """One rank's tokens far from the median rank's in the same step: by `k` standard
    errors and by `rel` of the median. Strong when the same rank stays off for `persist`
    steps and was extreme."""
    return imbalanced_ranks(trained_rank_tokens(samples), cfg)


def imbalanced_ranks(ranks: tuple[pd.DataFrame, pd.DataFrame] | None, cfg: dict
                     ) -> list[Alert]:
    """rank_imbalance, from trained_rank_tokens already made."""
    rule = cfg["rank_imbalance"]
    if ranks is None:
        return []
    tokens, z = ranks
    if tokens.shape[1] < rule["min_ranks"]:
        return []
    median = tokens.median(axis=1)
    far = tokens.sub(median, axis=0).abs().ge(rule["rel"] * median, axis=0)
    low = cfg["severity"]["sustained"] * rule["k"]
    twice = (z >= low) & (z.shift(1) >= low) | (z <= -low) & (z.shift(1) <= -low)
    off = ((z.abs() >= rule["k"]) | twice) & far
    persist = int(cfg["severity"]["persist"])
    alerts = []
    for rank in off.columns[off.any()]:
        hit = off[rank].to_numpy(bool)
        size = np.nan_to_num(z[rank].abs().to_numpy())
        full = hit & (size >= rule["k"])  # persistence counts hits at k, as elsewhere
        strong = (run_lengths(full) >= persist) & (run_peaks(size, full) >= rule["extreme"])
        for i in np.flatnonzero(hit):
            step = off.index[i]
            alerts.append(Alert("rank_imbalance", STRONG if strong[i] else WEAK, int(step), {
                "rank": int(rank), S.H_TOKENS: rounded(tokens.at[step, rank]),
                "median_rank_tokens": rounded(median.at[step]), "z": rounded(z.at[step, rank])},
                float(size[i]), key=f"rank {rank}", drill=Drill(S.RESPONSE_LEN)))
    return alerts
