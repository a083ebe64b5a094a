"""The log-ratio and KL columns of a batch: every sample's policy and reference logprobs,
laid end to end as two float arrays, reduced per sample in one numpy pass."""
from __future__ import annotations

import math
from itertools import chain

import numpy as np

from loaders import schema as S
from loaders.index import kernel
from loaders.index.block_fields import BlockFields
from loaders.index.field_columns import Report, numeric_heads
from loaders.index.fields import column, joined
from loaders.index.token_bins import Order
from loaders.parse import kl
from loaders.parse.arrays import BadField, float_array

KL_COLUMNS = (S.LOG_RATIO_MEAN, S.LOG_RATIO_SUM, *map(S.kl_mean, S.KL_ESTIMATORS),
              *map(S.kl_sum, S.KL_ESTIMATORS))


class LogRatios:
    """Collects the logprobs of the samples that have both; then fills the KL columns."""

    def __init__(self) -> None:
        self._policy: list[np.ndarray] = []
        self._reference: list[np.ndarray] = []
        self._rows: list[np.ndarray] = []  # each sample kept, in order: its row
        self._lengths: list[np.ndarray] = []  # and its n
        self._order: Order | None = None

    def add(self, objs: list[dict], first: int, lengths: list[int], report: Report,
            keys: set[str]) -> None:
        """Samples numbered from `first`, with their aligned lengths and their keys (a
        Fields: its columns)."""
        if isinstance(keys, BlockFields) and keys.numbers(S.LOGPROBS) and keys.numbers(
                S.REF_LOGPROBS):
            both, pair = self._block_pair(keys, lengths)
        else:
            policy = column(objs, S.LOGPROBS, keys)
            reference = column(objs, S.REF_LOGPROBS, keys)
            both = [i for i, (p, r, n) in enumerate(zip(policy, reference, lengths))
                    if n and p is not None and r is not None]
            pair = (_flat(policy, both, lengths), _flat(reference, both, lengths)) if both \
                else (None, None)
        if not both:
            return
        if pair[0] is None or pair[1] is None:  # something odd in a list: sample by sample
            both = [i for i in both if self._one(objs[i], lengths[i], i, report)]
        else:
            self._policy.append(pair[0])
            self._reference.append(pair[1])
        kept = np.array(both, dtype=np.int64)
        self._order = None
        self._rows.append(first + kept)
        self._lengths.append(np.asarray(lengths, dtype=np.int64)[kept])

    @staticmethod
    def _block_pair(keys: BlockFields, lengths: list[int]) -> tuple[list[int], tuple]:
        """A block's samples with both lists, and their heads: no list a sample is made."""
        n = np.asarray(lengths, dtype=np.int64)
        rows = np.flatnonzero((n > 0) & (keys.lengths(S.LOGPROBS) >= 0)
                              & (keys.lengths(S.REF_LOGPROBS) >= 0))
        return rows.tolist(), (keys.heads(S.LOGPROBS, rows, n),
                               keys.heads(S.REF_LOGPROBS, rows, n))

    def _one(self, obj: dict, n: int, i: int, report: Report) -> bool:
        pair = []
        for key in (S.LOGPROBS, S.REF_LOGPROBS):  # the problem names the list that has it
            try:
                pair.append(float_array(_head(obj[key], n)))
            except BadField as err:
                report(i, f"{key}: {err}")
                return False
        self._policy.append(pair[0])
        self._reference.append(pair[1])
        return True

    @property
    def order(self) -> Order:
        """(rows, n) of the samples kept, in order: the layout of arrays(); one object
        until the next add (a Layout is shared by the metrics laid out alike)."""
        if self._order is None:
            self._order = joined(self._rows), joined(self._lengths)
        return self._order

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(policy, reference) logprobs of the samples in `order`, end to end."""
        if not self._policy:
            return np.zeros(0), np.zeros(0)
        return joined(self._policy, np.float64), joined(self._reference, np.float64)

    def fill(self, cols: dict, policy: np.ndarray, reference: np.ndarray) -> None:
        """The KL columns (NaN where not computable); non-finite logprobs add to NAN_COUNT."""
        rows = len(cols[S.STEP])
        for name in KL_COLUMNS:
            cols[name] = np.full(rows, math.nan)
        at, lengths = self.order
        if not len(at):
            return
        starts = np.cumsum(lengths) - lengths
        sums = _segment_sums(policy - reference, starts, lengths)
        finite = sums["finite"]
        if np.array_equal(finite, lengths):  # every difference finite: so both logprobs
            bad = 0
        else:
            bad = np.add.reduceat((~np.isfinite(policy)) + (~np.isfinite(reference)).astype(
                np.int64), starts)
        with np.errstate(invalid="ignore", divide="ignore"):
            for name in S.KL_ESTIMATORS:
                cols[S.kl_sum(name)][at] = np.where(finite > 0, sums[name], math.nan)
                cols[S.kl_mean(name)][at] = sums[name] / finite
        cols[S.LOG_RATIO_SUM] = cols[S.kl_sum(S.K1)].copy()
        cols[S.LOG_RATIO_MEAN] = cols[S.kl_mean(S.K1)].copy()
        cols[S.NAN_COUNT][at] += bad


def _segment_sums(log_ratio: np.ndarray, starts: np.ndarray, lengths: np.ndarray
                  ) -> dict[str, np.ndarray]:
    """kl.segment_sums: where every log-ratio is finite (the usual case), the estimators'
    per-token values and sums made in one C pass (kernel.kl_sums) beside numpy's two expm1
    passes, with numpy's bits; else, or without the build, numpy's passes."""
    r = np.asarray(log_ratio, dtype=np.float64)
    if not np.isfinite(r).all():
        return kl.segment_sums(r, starts)
    with np.errstate(over="ignore", invalid="ignore"):
        sums = kernel.kl_sums(r, np.expm1(np.negative(r)), np.expm1(r), lengths)
    if sums is None:
        return kl.segment_sums(r, starts)
    return {**dict(zip(S.KL_ESTIMATORS, sums)), "finite": lengths.astype(np.int64)}


def _head(values: object, n: int) -> object:
    """The first n items of a list or array (anything else as it is, for float_array to
    name)."""
    return values[:n] if isinstance(values, (list, np.ndarray)) and len(values) != n else values


def _flat(values: list, rows: list[int], lengths: list[int]) -> np.ndarray | None:
    """The first n numbers of every sample's value in rows, end to end; None when one of
    them is not a plain list of numbers."""
    parts = [values[i] for i in rows]
    if set(map(type, parts)) == {np.ndarray}:  # a Parquet dump's: already numbers
        return numeric_heads(parts, [lengths[i] for i in rows])
    if set(map(type, parts)) != {list}:
        return None
    fast = kernel.flat_heads(parts, [lengths[i] for i in rows])
    if fast is not None:
        return fast
    heads = [v if len(v) == lengths[i] else v[:lengths[i]] for v, i in zip(parts, rows)]
    try:
        return np.fromiter(chain.from_iterable(heads), np.float64,
                           sum(lengths[i] for i in rows))
    except (TypeError, ValueError, OverflowError):
        return None
