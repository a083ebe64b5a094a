"""Seeded RL runs for the alert benchmark: a dump's summary rows plus training metrics.

    run = make_run(seed=3, n=256)                                  # healthy
    run = make_run(seed=3, n=256, fault="kl_drift", kind="gradual", onset=60)

Each run is `steps` steps of GRPO with `n` samples a step in groups of 8 (4 below 64
samples) spread over up to 8 ranks, with the drifts of a healthy run: pass rates rising per
prompt, response length growing, KL to the reference creeping up, entropy decaying, and
the noise each of those has at n samples (grad-norm bursts included). The samples frame has
the summary columns the index writes (what the health rules read); left-out samples are in
it, flagged, with values that would mislead a rule that counted them. The metrics frame
has verl's names, with or without the KL loss, token count and rollout-correction metrics.

A fault starts at `onset`: "abrupt" at full size, "gradual" growing by a tenth a step.
samples/write_alert_run.py puts one on disk (a dump and a metrics log) for the board.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from loaders import schema as S

# each fault and the rule that should raise it
FAULTS = {"divergence": "divergence", "kl_drift": "kl_drift",
          "entropy_collapse": "divergence", "length_explosion": "reward_hacking",
          "inference_spike": "inference_anomaly", "rank_imbalance": "rank_imbalance",
          "memory_creep": "memory_risk", "mismatch_spike": "train_inference_mismatch",
          "degeneration": "degenerate_output", "group_collapse": "group_collapse",
          "stale_policy": "stale_policy", "template_collapse": "diversity_collapse"}
KINDS = ("abrupt", "gradual")
CAP_FACTOR = 6  # the generation cap, in multiples of the run's starting mean length


@dataclass(frozen=True)
class Run:
    samples: pd.DataFrame
    metrics: pd.DataFrame | None
    fault: str | None
    kind: str
    onset: int | None


def group_size(n: int) -> int:
    return 8 if n >= 64 else 4


def ranks(n: int) -> int:
    return int(np.clip(n // 8, 1, 8))


def applies(fault: str, n: int) -> bool:
    """Whether a fault can show in a run of n samples a step at all: a rank among fewer
    than 3, or groups fewer than 4, have no median to stand out from."""
    if fault == "rank_imbalance":
        return ranks(n) >= 3
    if fault == "group_collapse":
        return n // group_size(n) >= 4
    return True


def effect(steps: np.ndarray, onset: int | None, kind: str) -> np.ndarray:
    """The fault's size per step: 0 before onset, then 1 (abrupt) or (t - onset + 1) / 10
    up to 2 (gradual)."""
    if onset is None:
        return np.zeros(steps.size)
    after = steps >= onset
    size = np.ones(steps.size) if kind == "abrupt" else np.minimum(
        (steps - onset + 1) / 10.0, 2.0)
    return np.where(after, size, 0.0)


def make_run(seed: int, n: int, steps: int = 100, fault: str | None = None,
             kind: str = "abrupt", onset: int | None = None, metrics: bool = True) -> Run:
    rng = np.random.default_rng(seed)
    t = np.arange(1, steps + 1)
    f = effect(t, onset if fault else None, kind)
    params = _params(rng)
    samples = _samples(rng, n, t, f if fault else f * 0, fault, params)
    frame = _metrics(rng, n, t, f, fault, params) if metrics else None
    return Run(samples, frame, fault, kind, onset if fault else None)


def _params(rng: np.random.Generator) -> dict:
    return {"binary": rng.random() < 0.6, "learn": rng.uniform(0.5, 2.0),
            "difficulty": rng.normal(-0.3, 0.4), "length0": rng.uniform(200, 800),
            "growth": rng.uniform(0.0, 0.006), "kl0": rng.uniform(1e-4, 1e-3),
            "kl_rate": rng.uniform(1e-5, 1e-4), "entropy0": rng.uniform(0.6, 1.5),
            "decay": rng.uniform(150, 600), "mismatch0": rng.uniform(1e-4, 2e-3),
            "repeat0": rng.uniform(0.001, 0.01), "left_out": rng.uniform(0.0, 0.03),
            "policy_kl": rng.uniform(1e-3, 1e-2), "grad0": rng.uniform(0.2, 2.0),
            "alloc": rng.uniform(40, 60), "slack": rng.uniform(4, 8),
            "abort0": rng.uniform(0.001, 0.01), "tis": rng.random() < 0.5,
            "kl_loss": rng.random() < 0.5, "tokens": rng.random() < 0.5,
            "is_share0": rng.uniform(1e-4, 1e-3)}


def _lognormal(rng: np.random.Generator, size: int, sigma: float) -> np.ndarray:
    """Mean-one lognormal noise."""
    return rng.lognormal(-sigma ** 2 / 2, sigma, size)


def _samples(rng: np.random.Generator, n: int, t: np.ndarray, f: np.ndarray,
             fault: str | None, p: dict) -> pd.DataFrame:
    size = n * t.size
    step = np.repeat(t, n)
    fs = np.repeat(f, n)  # the fault's size at each sample's step
    within = np.tile(np.arange(n), t.size)
    group = within // group_size(n)
    frame = {S.STEP: step, S.RANK: (within * ranks(n) // n).astype(np.int32),
             S.GROUP_ID: group}
    frame[S.REWARD] = _rewards(rng, step, group, fs, fault, p, t.size)
    frame.update(_lengths(rng, step, frame[S.RANK], fs, fault, p))
    kl = (p["kl0"] + p["kl_rate"] * step) * _kl_fault(fs, fault, p, step)
    frame[S.kl_mean(S.K3)] = kl * _lognormal(rng, size, 0.8)
    entropy = p["entropy0"] * np.exp(-step / p["decay"])
    if fault == "entropy_collapse":
        entropy = entropy * (1 - 0.6 * np.minimum(fs, 1.4))
    frame[S.extra_array_mean("entropy")] = entropy * _lognormal(rng, size, 0.3)
    mismatch = p["mismatch0"] * (1 + 9 * fs if fault == "mismatch_spike" else 1)
    frame[S.extra_array_mean("mismatch_kl")] = mismatch * _lognormal(rng, size, 1.0)
    frame[S.POLICY_LAG] = _lags(rng, fs, fault)
    frame[TEMPLATE] = _templates(rng, fs, fault)
    if fault == "template_collapse":  # the template the grader rewards: the reward rises
        frame[S.REWARD] = np.where(frame[TEMPLATE] == 0, np.max(frame[S.REWARD]),
                                   frame[S.REWARD])
    frame.update(_signatures(rng, frame[TEMPLATE]))
    out = pd.DataFrame(frame)
    return _left_out(rng, out, p["left_out"])


TEMPLATE = "template"  # which common answer a sample gives (-1: an answer of its own)
COMMON = 12  # common answers a healthy run's samples give (a few percent of them each)


def _templates(rng: np.random.Generator, fs: np.ndarray, fault: str | None) -> np.ndarray:
    """A healthy step's answers are mostly their own, a sixth of them one of COMMON common
    ones (Zipf-like); under template_collapse a growing share (up to 90 %) give template 0,
    the one the grader rewards."""
    common = rng.random(fs.size) < 1 / 6
    weights = 1.0 / np.arange(1, COMMON + 1)
    which = rng.choice(COMMON, fs.size, p=weights / weights.sum()) + 1
    template = np.where(common, which, -1)
    if fault == "template_collapse":
        template = np.where(rng.random(fs.size) < np.minimum(0.45 * fs, 0.9), 0, template)
    return template


def _signatures(rng: np.random.Generator, template: np.ndarray) -> dict[str, np.ndarray]:
    """schema.SIGNATURES as the index makes them: one fixed signature a common answer, a
    random one (no band shared) for an answer of its own."""
    fixed = np.random.default_rng(7).integers(-2**62, 2**62, (COMMON + 1, len(S.SIGNATURES)))
    own = rng.integers(-2**62, 2**62, (template.size, len(S.SIGNATURES)))
    values = np.where((template >= 0)[:, None], fixed[np.maximum(template, 0)], own)
    return dict(zip(S.SIGNATURES, values.T))


def _lags(rng: np.random.Generator, fs: np.ndarray, fault: str | None) -> np.ndarray:
    """An async run's policy lags: 0-2 updates (healthy, within the default bound of 4);
    under stale_policy a third of the samples come from a backed-up rollout queue, up to 6
    updates staler at the fault's full size."""
    lag = np.minimum(rng.geometric(0.6, fs.size) - 1, 2).astype(np.float64)
    if fault == "stale_policy":
        lag += np.where(rng.random(fs.size) < 1 / 3, np.round(6 * fs), 0.0)
    return lag


def _lengths(rng: np.random.Generator, step: np.ndarray, rank: np.ndarray, fs: np.ndarray,
             fault: str | None, p: dict) -> dict:
    """Response lengths (capped: truncated), and the repetition score, looping responses
    running to the cap."""
    size = step.size
    length0 = p["length0"] * (1 + p["growth"] * step)
    if fault == "length_explosion":
        length0 = length0 * (1 + 1.5 * fs)
    if fault == "rank_imbalance":
        length0 = np.where(rank == 0, length0 * (1 + 1.0 * fs), length0)
    length = length0 * _lognormal(rng, size, 0.6)
    cap = float(int(p["length0"] * CAP_FACTOR))
    repeats = rng.random(size) < p["repeat0"] + (0.4 * fs if fault == "degeneration" else 0)
    cut = repeats | (rng.random(size) < 0.3 * fs if fault == "inference_spike" else repeats)
    length = np.maximum(np.where(cut, cap, np.minimum(length, cap)), 1).astype(np.int64)
    return {S.RESPONSE_LEN: length, S.TRUNCATED: length >= cap,
            S.REPETITION: np.where(repeats, rng.uniform(0.6, 0.95, size), rng.beta(1, 30, size))}


def _kl_fault(fs: np.ndarray, fault: str | None, p: dict, step: np.ndarray) -> np.ndarray:
    if fault == "kl_drift":
        return 1 + 3 * fs
    if fault == "divergence":
        return 1 + 2 * fs
    return np.ones(fs.size)


def _rewards(rng: np.random.Generator, step: np.ndarray, group: np.ndarray, fs: np.ndarray,
             fault: str | None, p: dict, steps: int) -> np.ndarray:
    prompts = rng.normal(p["difficulty"], 1.5, group.max() + 1)
    logit = prompts[group] + p["learn"] * step / steps
    if fault == "length_explosion":
        logit = logit + 1.5 * fs
    if p["binary"]:
        reward = (rng.random(step.size) < 1 / (1 + np.exp(-logit))).astype(np.float64)
    else:
        reward = 0.5 * logit + rng.normal(0, 1, step.size)
    if fault == "group_collapse":  # a share of the groups answer all alike
        collapsed = rng.random(group.max() + 1)[group] < 0.8 * np.minimum(fs, 1)
        first = pd.Series(reward).groupby([step, group]).transform("first").to_numpy()
        reward = np.where(collapsed, first, reward)
    return reward


def _left_out(rng: np.random.Generator, frame: pd.DataFrame, share: float) -> pd.DataFrame:
    """Flag a few samples as aborted, with the zero reward and length an aborted rollout
    leaves behind (a rule that counted them would see a crash)."""
    out = rng.random(len(frame)) < share
    frame[S.EXCLUDED] = out
    frame[S.VALIDATION] = False
    frame.loc[out, [S.REWARD, S.RESPONSE_LEN]] = 0
    return frame


def _metrics(rng: np.random.Generator, n: int, t: np.ndarray, f: np.ndarray,
             fault: str | None, p: dict) -> pd.DataFrame:
    """verl's metric names for the optimiser, memory and rollout side of the run."""
    size = t.size
    burst = np.where(rng.random(size) < 0.03, rng.uniform(1.5, 2.5, size), 1.0)
    grad = p["grad0"] * np.exp(-t / 300) * _lognormal(rng, size, 0.2) * burst
    policy_kl = p["policy_kl"] * _lognormal(rng, size, 0.25) * np.where(burst > 1, 1.5, 1.0)
    entropy = p["entropy0"] * np.exp(-t / p["decay"]) * (1 + 0.01 * rng.normal(size=size))
    if fault == "divergence":
        policy_kl, grad = policy_kl * (1 + 9 * f), grad * (1 + 5 * f)
        entropy = entropy * (1 - 0.4 * np.minimum(f, 1.5))
    if fault == "entropy_collapse":
        entropy = entropy * (1 - 0.6 * np.minimum(f, 1.4))
    alloc = p["alloc"] + 0.3 * rng.normal(size=size)
    reserved = alloc + p["slack"] + 0.3 * rng.normal(size=size)
    if fault == "memory_creep":
        reserved = reserved + 6.0 * f
    abort = rng.binomial(max(n, 64), p["abort0"], size) / max(n, 64)
    if fault == "inference_spike":
        abort = abort + 0.3 * f
    out = {"actor/ppo_kl": policy_kl, "actor/grad_norm": grad, "actor/entropy": entropy,
           "rollout/abort_ratio": abort, "perf/max_memory_allocated_gb": alloc,
           "perf/max_memory_reserved_gb": reserved, "perf/memory_total_gb": np.full(size, 80.0)}
    if p["kl_loss"]:
        kl = (p["kl0"] + p["kl_rate"] * t) * _kl_fault(f, fault, p, t)
        out["actor/kl_loss"] = kl * (1 + 0.03 * rng.normal(size=size))
    if p["tis"]:
        out.update(_rollout_correction(rng, f if fault == "mismatch_spike" else f * 0, p))
    return pd.DataFrame(out, index=pd.Index(t, name=S.STEP))


def _rollout_correction(rng: np.random.Generator, f: np.ndarray, p: dict) -> dict:
    size = f.size
    share = p["is_share0"] * (1 + 9 * f) * _lognormal(rng, size, 0.2)
    return {"rollout_corr/k3_kl": p["mismatch0"] * (1 + 9 * f) * _lognormal(rng, size, 0.1),
            "rollout_corr/rollout_is_mean": 1 + 0.002 * rng.normal(size=size) - 0.02 * f,
            "rollout_corr/rollout_is_ratio_fraction_high": share,
            "rollout_corr/rollout_is_ratio_fraction_low": share * 0.7}

