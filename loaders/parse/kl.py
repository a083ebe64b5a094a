"""KL estimators of KL(π‖π_ref) from tokens sampled from π.

With r = log π(x) − log π_ref(x) (the log_ratio) and x ~ π:
  k1 = r                    unbiased; negative on tokens π likes less than π_ref
  k2 = ½·r²                 biased but ≥ 0 and low variance
  k3 = exp(−r) − 1 + r      unbiased and ≥ 0 per token (Schulman, "Approximating KL")
The original RL Logging Board shows exp(r) − 1 − r, the k3 form of the *reverse* direction
KL(π_ref‖π), which is only unbiased for samples of π_ref.  It is offered as ``k3_reverse``.
"""
from __future__ import annotations

import numpy as np

from loaders import schema as S


def estimate(log_ratio: np.ndarray) -> dict[str, np.ndarray]:
    """Per-token values of every estimator, keyed by schema name."""
    r = np.asarray(log_ratio, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return {
            S.K1: r,
            S.K2: 0.5 * r * r,
            S.K3: np.expm1(-r) + r,
            S.K3_REVERSE: np.expm1(r) - r,
        }


def segment_sums(log_ratio: np.ndarray, starts: np.ndarray) -> dict[str, np.ndarray]:
    """Sums of each estimator over consecutive non-empty segments, skipping non-finite tokens.

    Returns the sums keyed by estimator plus ``"finite"``, the count of finite tokens.
    Doing this for a whole batch of samples at once keeps numpy's per-call cost off each line.
    """
    finite = np.isfinite(log_ratio)
    if finite.all():  # the usual case: no token to zero, each segment's count its length
        r = np.asarray(log_ratio, dtype=np.float64)
        counts = np.diff(np.append(starts, len(r))).astype(np.int64)
    else:
        r = np.where(finite, log_ratio, 0.0)
        counts = np.add.reduceat(finite.astype(np.int64), starts)
    # estimate()'s values, each made in one scratch array and summed: the same operations
    # in the same order, so the same bits, without a fresh array (and its page faults) each
    scratch = np.empty_like(r)
    sums = {S.K1: np.add.reduceat(r, starts)}
    np.multiply(0.5, r, out=scratch)
    sums[S.K2] = np.add.reduceat(np.multiply(scratch, r, out=scratch), starts)
    with np.errstate(over="ignore", invalid="ignore"):
        np.expm1(np.negative(r, out=scratch), out=scratch)
        sums[S.K3] = np.add.reduceat(np.add(scratch, r, out=scratch), starts)
        np.expm1(r, out=scratch)
        sums[S.K3_REVERSE] = np.add.reduceat(np.subtract(scratch, r, out=scratch), starts)
    sums["finite"] = counts
    return sums
