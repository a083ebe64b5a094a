"""Token metrics by position bin, per group of samples: the token digest's means.

Bins are REL_BINS bins of each response's relative position, then ABS_TOKENS-token bins up
to the group's longest response.  Two ways to the same sums: by bin (a reduceat over bin
edges, cheap for long responses) and by token (a bincount over each token's bin, cheap for
short ones, where a sample has fewer tokens than bins).
"""
from __future__ import annotations

import numpy as np

from loaders.index import kernel

REL_BINS = 32
ABS_TOKENS = 512
Order = tuple[np.ndarray, np.ndarray]  # (row, n) of each sample, in the values' order


class Layout:
    """Where each sample's tokens and position bins sit in a metric's concatenated values."""

    def __init__(self, order: Order, group_of_row: np.ndarray
                 ) -> None:
        """order: the samples' rows and lengths, in the values' order; group_of_row: the
        group of every row."""
        self.rows, self.lengths = order  # numpy: a hot token's row is read by index
        self.starts = np.cumsum(self.lengths) - self.lengths
        self.groups = group_of_row[self.rows]
        self.width = REL_BINS + int(-(-self.lengths.max() // ABS_TOKENS))  # bins a group
        self._edges: list[np.ndarray] | None = None
        self._token_keys: np.ndarray | None = None
        self._by_group = np.argsort(self.groups, kind="stable")
        ordered = self.groups[self._by_group]
        self._runs = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        self._run_group = ordered[self._runs]

    @property
    def edges(self) -> list[np.ndarray]:
        """Each sample's relative, then absolute, bin edges as offsets into the concatenated
        values (consecutive bins tile them); made once, for the by-bin path only."""
        if self._edges is None:
            n = self.lengths[:, None]
            rel = (np.arange(REL_BINS + 1) * n + REL_BINS - 1) // REL_BINS  # each bin's first
            absolute = np.minimum(np.arange(self.width - REL_BINS + 1) * ABS_TOKENS, n)
            self._edges = [self.starts[:, None] + rel, self.starts[:, None] + absolute]
        return self._edges

    def token_keys(self) -> np.ndarray:
        """Each token's relative bin, then each token's absolute bin, as a flat index into a
        (groups x width) table: position p of n is in relative bin floor(p * REL_BINS / n)
        (the bin whose first position, ceil(b * n / REL_BINS), is the last at or before p)
        and absolute bin p // ABS_TOKENS.  Made once for every metric laid out alike."""
        if self._token_keys is None:
            sample = np.repeat(np.arange(len(self.lengths)), self.lengths)
            position = np.arange(len(sample)) - self.starts[sample]
            first = self.groups[sample] * self.width
            self._token_keys = np.concatenate((
                first + position * REL_BINS // self.lengths[sample],
                first + REL_BINS + position // ABS_TOKENS))
        return self._token_keys

    def per_group(self, per_sample: np.ndarray, groups: int) -> np.ndarray:
        """Sums of per-sample rows by group (groups x columns)."""
        out = np.zeros((groups, per_sample.shape[1]))
        out[self._run_group] = np.add.reduceat(per_sample[self._by_group], self._runs, axis=0)
        return out


def binned(name: str, values: np.ndarray, layout: Layout, groups: int
            ) -> tuple[str, np.ndarray, np.ndarray]:
    """(metric, finite-token counts, means) per group and bin: REL_BINS relative bins, then
    the absolute ones (shape groups x bins).  Segment sums by reduceat: no per-token index
    arrays and no cumulative sum whose rounding a huge value would spoil."""
    finite = np.isfinite(values)
    width = layout.width
    if len(values) < len(layout.lengths) * width:  # short responses: fewer tokens than bins
        return _binned_by_token(name, values, finite, layout, (groups, width))
    whole = bool(finite.all())  # the usual case: counts are the bins' widths
    clean = values if whole else np.where(finite, values, 0.0)
    counts, sums = [], []
    for edges in layout.edges:
        first, last = edges[:, :-1].ravel(), edges[:, 1:].ravel()
        empty = first == last
        for data, out in ((None if whole else finite.astype(np.float64), counts),
                          (clean, sums)):
            if data is None:
                part = (last - first).astype(np.float64)
            else:
                # a zero past the end: an empty last bin starts there, and the bin before it
                # still ends at the last token
                part = np.add.reduceat(np.append(data, 0.0), first)
                part[empty] = 0.0
            out.append(layout.per_group(part.reshape(len(edges), -1), groups))
    count, total = np.hstack(counts), np.hstack(sums)
    with np.errstate(invalid="ignore", divide="ignore"):
        return name, count, total / count


def _binned_by_token(name: str, values: np.ndarray, finite: np.ndarray, layout: Layout,
                     shape: tuple[int, int]) -> tuple[str, np.ndarray, np.ndarray]:
    """_binned's result by each token's bin (Layout.token_keys), in one C pass when built."""
    fast = kernel.token_bins(values, layout.lengths, layout.groups, shape, REL_BINS, ABS_TOKENS)
    if fast is not None:
        count, total = fast
    else:
        keys = layout.token_keys()
        clean = np.where(finite, values, 0.0)
        size = shape[0] * shape[1]
        count = np.bincount(keys, np.tile(finite.astype(np.float64), 2), size).reshape(shape)
        total = np.bincount(keys, np.tile(clean, 2), size).reshape(shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        return name, count, total / count
