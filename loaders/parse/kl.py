"""KL estimators of KL(π‖π_ref) from tokens sampled from π.

With r = log π(x) − log π_ref(x) (the log_ratio) and x ~ π:
  k1 = r                    unbiased; negative on tokens π likes less than π_ref
  k2 = ½·r²                 biased but ≥ 0 and low variance
  k3 = exp(−r) − 1 + r      unbiased and ≥ 0 per token (Schulman, "Approximating KL")
The original RL Logging Board shows exp(r) − 1 − r, the k3 form of the *reverse* direction
KL(π_ref‖π), which is only unbiased for samples of π_ref.  It is offered as ``k3_reverse``.
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from loaders import schema as S


def estimate(log_ratio: np.ndarray) -> dict[str, np.ndarray]:
    """Per-token values of every estimator, keyed by schema name."""
    r = np.asarray(log_ratio, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return dict(_each(r))


def k3(r: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """exp(−r) − 1 + r a token, computed as expm1(−r) + r (in `out` when given)."""
    return np.add(np.expm1(np.negative(r, out=out), out=out), r, out=out)


def _each(r: np.ndarray, out: np.ndarray | None = None) -> Iterator[tuple[str, np.ndarray]]:
    """Every estimator's per-token values in turn: each a new array, or each made in `out`
    (one scratch array, to be used before the next is asked for).  The same operations in
    the same order either way, so the same bits."""
    yield S.K1, r
    yield S.K2, np.multiply(np.multiply(0.5, r, out=out), r, out=out)
    yield S.K3, k3(r, out)
    yield S.K3_REVERSE, np.subtract(np.expm1(r, out=out), r, out=out)


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
    # each estimator made in one scratch array and summed before the next: no fresh array
    # (and its page faults) each
    with np.errstate(over="ignore", invalid="ignore"):
        sums = {name: np.add.reduceat(values, starts)
                for name, values in _each(r, np.empty_like(r))}
    sums["finite"] = counts
    return sums
