"""Per-sample fields of a batch of samples as columns, one list comprehension per key.

The common case (every value of a key a number or missing, every token list a list of
numbers) is read for the whole batch at once; a sample whose value is anything else takes
the strict per-sample reading (loaders.parse.fields, loaders.index.grouping), which reports
its problems for that sample alone.
"""
from __future__ import annotations

import math

import numpy as np

from loaders import schema as S
from loaders.index import kernel
from loaders.index.block_fields import BlockFields
from loaders.index.extras import Report
from loaders.index.fields import column
from loaders.parse.arrays import ALIGNED_KEYS, BadField
from loaders.parse.fields import finite_sum, scalar
from loaders.parse.images import count_of

_NUMBERS = frozenset({float, int, bool, type(None)})


def numbers(values: list) -> np.ndarray | None:
    """float64 (None -> NaN) when every value is a number, a bool or None; else None."""
    fast = kernel.numbers(values) if values.__class__ is list else None
    if fast is not None:
        return fast
    kinds = set(map(type, values))
    if not kinds <= _NUMBERS:
        return None
    try:
        if type(None) not in kinds:  # the usual case: no pass to turn None into NaN
            return np.array(values, dtype=np.float64)
        return np.array([math.nan if v is None else v for v in values], dtype=np.float64)
    except (OverflowError, TypeError, ValueError):
        return None


def scalars(objs: list[dict], keys: set[str], cols: dict, report: Report) -> np.ndarray:
    """The reward-like scalars (NaN where missing or unusable) and the reward gap; returns
    each sample's count of present, non-finite scalars."""
    bad = np.zeros(len(objs), dtype=np.int64)
    for key in S.SCALAR_KEYS:
        if key not in keys:  # no sample has it
            cols[key] = np.full(len(objs), math.nan)
            continue
        values = column(objs, key, keys)
        arr, unusable = numbers(values), None
        if arr is None:
            arr, unusable = _scalars(values, key, report)
        finite = np.isfinite(arr)
        if not finite.all():  # a value of the wrong kind is reported as such, not counted
            present = np.array([v is not None for v in values], dtype=bool)  # here too
            bad += present & ~finite & (True if unusable is None else ~unusable)
        cols[key] = arr
    cols[S.REWARD_GAP] = cols[S.REWARD] - cols[S.REF_REWARD]
    return bad


def policy_lag(objs: list[dict], keys: set[str], steps: np.ndarray, report: Report
               ) -> tuple[np.ndarray, np.ndarray]:
    """(step - oldest policy version, newest - oldest) of every sample; NaN without one."""
    nan = np.full(len(objs), math.nan)
    if S.POLICY_VERSION not in keys:
        return nan, nan.copy()
    versions = []
    for key in (S.POLICY_VERSION, S.POLICY_VERSION_NEWEST):
        values = column(objs, key, keys)
        arr = numbers(values)
        if arr is None:
            arr = _scalars(values, key, report)[0]
        versions.append(arr)
    oldest, newest = versions
    newest = np.where(np.isnan(newest), oldest, newest)
    return steps - oldest, newest - oldest


def image_counts(objs: list[dict], keys: set[str]) -> np.ndarray:
    """How many images each sample's prompt names under schema.IMAGE_KEYS (0: none)."""
    counts = np.zeros(len(objs), dtype=np.int64)
    for key in (k for k in S.IMAGE_KEYS if k in keys):
        counts += np.fromiter(map(count_of, column(objs, key, keys)), np.int64, len(objs))
    return counts


def aligned(objs: list[dict], keys: set[str]) -> tuple[np.ndarray, np.ndarray]:
    """(length after alignment, whether the per-token lists disagreed) of every sample: the
    shortest of its per-token lists (loaders.parse.arrays's rule), 0 without any."""
    lengths = [_lengths_of(objs, key, keys) for key in ALIGNED_KEYS if key in keys]
    if not lengths:
        zeros = np.zeros(len(objs), dtype=np.int64)
        return zeros, zeros.astype(bool)
    stacked = np.vstack(lengths)
    longest = stacked.max(axis=0)
    shortest = np.where(stacked < 0, np.iinfo(np.int64).max, stacked).min(axis=0)
    shortest = np.where(longest < 0, 0, shortest)
    return shortest, (longest >= 0) & (shortest != longest)


def _lengths_of(objs: list[dict], key: str, keys: set[str]) -> np.ndarray:
    flat = keys.lengths(key) if isinstance(keys, BlockFields) else None
    return flat if flat is not None else _lengths(column(objs, key, keys))


def _lengths(values: list) -> np.ndarray:
    """Each value's length, -1 for what is not a list or array."""
    fast = kernel.list_lengths(values)
    if fast is not None:
        return fast
    if all(issubclass(kind, (list, np.ndarray)) for kind in set(map(type, values))):
        return np.fromiter(map(len, values), np.int64, len(values))
    return np.array([len(v) if isinstance(v, (list, np.ndarray)) else -1 for v in values],
                    dtype=np.int64)


def critic(objs: list[dict], keys: set[str], n: np.ndarray, cols: dict,
           report: Report) -> np.ndarray:
    """Value mean and token-reward sum over each sample's first n tokens (finite ones);
    returns each sample's count of non-finite values among them."""
    bad = np.zeros(len(objs), dtype=np.int64)
    lengths = n.tolist()
    for key, name, as_mean in ((S.VALUES, S.VALUE_MEAN, True),
                               (S.TOKEN_REWARDS, S.TOKEN_REWARD_SUM, False)):
        cols[name] = np.full(len(objs), math.nan)
        if key not in keys:
            continue
        totals = keys.sums(key, n) if isinstance(keys, BlockFields) else None
        values = column(objs, key, keys) if totals is None or not np.isfinite(
            totals[n > 0]).all() else None  # a block's lists are made only to look closer
        if totals is None:
            totals = _plain_sums(values, lengths)
        count = n.astype(np.float64)
        for i in np.flatnonzero(~np.isfinite(totals) & (n > 0)).tolist():
            if values[i] is None:
                continue
            try:
                totals[i], nonfinite = finite_sum(values[i], lengths[i])
            except BadField as err:
                report(i, f"{key}: {err}")
                continue
            bad[i] += nonfinite
            count[i] -= nonfinite
        with np.errstate(invalid="ignore", divide="ignore"):
            cols[name][:] = np.where(count > 0, totals / count, math.nan) if as_mean else (
                np.where(n > 0, totals, math.nan))
    return bad


def _plain_sums(values: list, lengths: list[int]) -> np.ndarray:
    """Each list's sum over its first n items, NaN where that needs a closer look (not a
    list, a null or a string inside, a non-finite sum): finite_sum reads those."""
    flat = numeric_heads(values, lengths)
    if flat is not None:  # a Parquet dump's arrays: one reduceat for the batch
        out = np.full(len(values), math.nan)
        used = np.array(lengths) > 0
        if used.any():
            starts = np.cumsum(np.array(lengths)[used]) - np.array(lengths)[used]
            out[used] = np.add.reduceat(flat, starts)
        return out
    fast = kernel.head_sums(values, lengths)
    if fast is not None:
        return fast
    try:
        return np.array([sum(v if len(v) == k else v[:k], 0.0) if v.__class__ is list and k
                         else math.nan for v, k in zip(values, lengths)], dtype=np.float64)
    except (TypeError, OverflowError):
        return np.full(len(values), math.nan)


def numeric_heads(values: list, lengths: list[int]) -> np.ndarray | None:
    """Every value's first n numbers end to end as float64, when every value is a numeric
    numpy array (a Parquet dump's columns); else None."""
    if set(map(type, values)) != {np.ndarray} or any(v.dtype.kind not in "iuf" or v.ndim != 1
                                                     for v in values):
        return None
    heads = [v[:n] for v, n in zip(values, lengths)]
    return np.concatenate(heads).astype(np.float64, copy=False) if heads else np.zeros(0)


def _scalars(values: list, key: str, report: Report) -> tuple[np.ndarray, np.ndarray]:
    """(each value as a scalar, NaN where it is none or of a wrong kind; which were of a
    wrong kind, each reported): numbers() refused the batch, so a value at a time."""
    arr, unusable = np.full(len(values), math.nan), np.zeros(len(values), dtype=bool)
    for i, value in enumerate(values):
        try:
            arr[i] = scalar(value)
        except BadField as err:
            report(i, f"{key}: {err}")
            unusable[i] = True
    return arr, unusable
