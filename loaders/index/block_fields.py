"""A Block's columns read as a parsed batch's (loaders.index.lines reads the block in C): the
same questions Fields answers of a batch of dicts, with the number lists end to end, and a
sample as the dict orjson would have made for the rare rule that reads one whole."""
from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from loaders.index.fields import Fields
from loaders.index.lines import MISSING, ORDERED_SUMS, Block, NumberColumn, TokenSpans, flat_sums


class Row(Mapping):
    """One sample of a block as the dict orjson would have made (for the rare per-sample
    rule that reads a sample whole)."""

    def __init__(self, fields: BlockFields, i: int) -> None:
        self._fields, self._i = fields, i

    def __getitem__(self, key: str) -> object:
        value = self._fields.raw(key)[self._i] if key in self._fields else MISSING
        if value is MISSING:
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[str]:
        return (k for k in self._fields.order if self._fields.raw(k)[self._i] is not MISSING)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class Rows(Sequence):
    """A block's samples as Rows, each made when it is asked for."""

    def __init__(self, fields: BlockFields) -> None:
        self._fields = fields

    def __len__(self) -> int:
        return self._fields.size

    def __getitem__(self, i: int) -> Row:  # type: ignore[override]
        if not -self._fields.size <= i < self._fields.size:
            raise IndexError(i)
        return Row(self._fields, i % self._fields.size)


class BlockFields(Fields):
    """A Block's columns, as Fields gives a parsed batch's."""

    def __init__(self, block: Block) -> None:
        super().__init__([], set(block.columns))
        self.block, self.size = block, len(block)
        self.order = list(block.columns)  # the first line's key order, then new keys
        self._raw: dict[str, list] = {}
        self._plain: dict[str, list] = {}

    def rows(self) -> Rows:
        return Rows(self)

    def numbers(self, key: str) -> NumberColumn | None:
        value = self.block.columns.get(key)
        return value if isinstance(value, tuple) else None

    def raw(self, key: str) -> list:
        """The key's value in every sample, MISSING where it has none."""
        if key not in self._raw:
            value = self.block.columns.get(key)
            self._raw[key] = (_lists(*value) if isinstance(value, tuple)
                              else value.lists(MISSING) if isinstance(value, TokenSpans)
                              else value if value is not None else [MISSING] * self.size)
        return self._raw[key]

    def column(self, key: str) -> list | TokenSpans:
        """The key's value in every sample, None where it has none (a token list column as
        it is: a list is read when asked for)."""
        spans = self.block.columns.get(key)
        if isinstance(spans, TokenSpans):
            return spans
        if key not in self._plain:
            raw = self.raw(key)  # a key every sample has (the usual case) is its list as is
            gaps = self.block.gaps
            lacking = key in gaps if gaps is not None and key in self.block.columns else (
                MISSING in raw)
            self._plain[key] = [None if v is MISSING else v for v in raw] if lacking else raw
        return self._plain[key]

    def lengths(self, key: str) -> np.ndarray | None:
        """Each sample's list length (-1: no list), for a number or token list column; else
        None."""
        value = self.block.columns.get(key)
        if isinstance(value, TokenSpans):
            return value.lengths
        value = self.numbers(key)
        return None if value is None else value[1]

    def heads(self, key: str, rows: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """The first lengths[i] numbers of each row's list, end to end (NaN for a null)."""
        values, sizes = self.numbers(key)
        want = lengths[rows]
        if len(rows) == len(sizes) and np.array_equal(sizes, want):
            return values  # every sample's whole list (the usual case): the values as they are
        starts = np.cumsum(np.maximum(sizes, 0)) - np.maximum(sizes, 0)
        at = np.repeat(starts[rows] - (np.cumsum(want) - want), want) + np.arange(want.sum())
        return values[at]

    def sums(self, key: str, lengths: np.ndarray) -> np.ndarray | None:
        """Each sample's first n numbers summed in order (NaN with no list or n 0); None where
        the interpreter's sum is not a plain one (3.12+)."""
        value = self.numbers(key)
        if value is None or not ORDERED_SUMS:
            return None
        values, sizes = value
        return flat_sums(values, sizes, lengths)


def _lists(values: np.ndarray, sizes: np.ndarray) -> list:
    """A number list column as the lists orjson made (a null back to None)."""
    out: list = []
    at = 0
    for size in sizes.tolist():
        if size < 0:
            out.append(MISSING)
            continue
        part = values[at:at + size].tolist()
        out.append([None if math.isnan(v) else v for v in part])
        at += size
    return out
