"""A batch's fields as columns: each key's value in every sample, taken once for the batch.

The summary's readers (field_columns, text_columns, kl_columns, token_digest) ask for a
key's column here; a Fields takes every key's at once (kernel.take: each sample's dict read
once, while it is in cache), a plain set of keys a key at a time.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from loaders.index import kernel


class Fields(set):
    """A batch's keys, and each key's value in every sample, taken for every key at once
    on first use (kernel.take: each sample read once, not once a key)."""

    def __init__(self, objs: list[dict], keys: set[str]) -> None:
        super().__init__(keys)
        self._objs = objs
        self._columns: dict[str, list] | None = None

    def column(self, key: str) -> list:
        if key not in self:
            return [None] * len(self._objs)
        if self._columns is None:
            names = tuple(self)
            taken = kernel.take(self._objs, names)
            self._columns = dict(zip(names, taken)) if taken is not None else {}
        if key not in self._columns:  # the Python path, a key at a time
            self._columns[key] = [o.get(key) for o in self._objs]
        return self._columns[key]


def column(objs: list[dict], key: str, keys: set[str]) -> list:
    """The key's value in every sample (None where missing)."""
    if isinstance(keys, Fields):
        return keys.column(key)
    return kernel.column(objs, key) if key in keys else [None] * len(objs)


def codes_of(values: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """Each value's code into the distinct values (first seen first), and those values: a
    batch's file names, one name mostly (zeros then, no lookup a row)."""
    distinct = list(dict.fromkeys(values))
    if len(distinct) == 1:
        return np.zeros(len(values), np.int64), distinct
    index = {value: i for i, value in enumerate(distinct)}
    return np.fromiter(map(index.__getitem__, values), np.int64, len(values)), distinct


def joined(parts: list[np.ndarray], dtype: type = np.int64) -> np.ndarray:
    """The arrays end to end: the one array itself when there is one (a chunk's plain lines
    are one batch: no copy of its columns), empty of `dtype` when there is none."""
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)
