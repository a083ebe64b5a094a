"""Token summaries made while parsing, so views across steps never read a step's tokens.

For each group of a parse batch's samples that share (file, step, validation), one digest:
- the token-weighted mean of each token metric per position bin: REL_BINS bins of each
  response's relative position, and ABS_TOKENS-token bins up to the group's longest one;
- its hot tokens: over the group's top tokens by KL (k3) and by mismatch_kl (about one in
  1,024), the token strings with how often they were among them, the metric's sum over
  those, and the sample and position of the largest.
The digest is bytes on the group's first row (schema.TOKEN_DIGEST), so every refresh,
growth, rewrite, follow and split keeps, drops or rebuilds it with its rows, like the rest
of the index.  It is fixed-size per group, a few hundred bytes, whatever the lengths.
"""
from __future__ import annotations

import numpy as np
import orjson

from loaders import schema as S
from loaders.index.fields import codes_of, column, joined
from loaders.index.hot_tokens import TokenLists, hot_entries
from loaders.index.token_bins import ABS_TOKENS, REL_BINS, Layout, Order, binned
from loaders.parse import kl
from loaders.parse.arrays import BadField, pack_floats

EXTRA = ("entropy", "mismatch_kl")  # token arrays stored besides logprob and k3
HOT_METRICS = (S.K3, "mismatch_kl")
VERSION = 1


class TokenDigest:
    """Collects what the digests need while a SummaryBatch parses, then builds them."""

    def __init__(self) -> None:
        self._rows: list[np.ndarray] = []  # row numbers in the batch of the samples kept
        self._tokens = TokenLists()
        self._extra: dict[str, dict[int, bytes]] = {name: {} for name in EXTRA}
        self._positions: dict[int, np.ndarray] = {}

    def add(self, objs: list[dict], first: int, lengths: np.ndarray,
            places: list[np.ndarray | None], keys: set[str]) -> None:
        """Samples numbered from `first` in the batch, with their aligned lengths and their
        keys (a Fields: its columns). `places`: of a multi-turn sample cut to its trained
        tokens, each token's place in the whole response, so a hot token opens at its
        place in the token views."""
        kept_rows = np.flatnonzero(lengths > 0)
        kept = kept_rows.tolist()
        self._rows.append(first + kept_rows)
        self._positions.update((first + i, places[i]) for i in kept if places[i] is not None)
        self._tokens.add(first, column(objs, S.RESPONSE_TOKENS, keys))
        for name in (name for name in EXTRA if name in keys):
            extra = column(objs, name, keys)
            for i in (i for i in kept if extra[i] is not None):
                values, n = extra[i], int(lengths[i])
                if isinstance(values, (list, np.ndarray)) and len(values) >= n:
                    try:
                        self._extra[name][first + i] = pack_floats(values, n)
                    except BadField:
                        continue

    def attach(self, cols: dict, policy: np.ndarray, reference: np.ndarray,
               order: Order) -> list[bytes | None]:
        """Each group's digest on its first row, None elsewhere (the batch's policy and
        reference logprobs of the samples in `order`, (row, n) each, are reused: nothing
        is parsed twice)."""
        out: list[bytes | None] = [None] * len(cols[S.STEP])
        rows = joined(self._rows)
        if not len(rows):
            return out
        group_of_row, first = _groups(cols, rows)
        tokens = self._tokens
        layouts: dict[int, Layout] = {}  # metrics of one source share their layout
        parts, hot = [], {}
        where = (cols[S.OFFSET], cols.get(S.ITEM))
        for name, (values, kept) in _metric_arrays(policy, reference, order,
                                                   self._extra).items():
            layout = layouts.setdefault(id(kept), Layout(kept, group_of_row))
            parts.append(binned(name, values, layout, len(first)))
            if name in HOT_METRICS:
                hot[name] = hot_entries(values, layout, tokens, where, len(first),
                                        self._positions)
        laid = [_Bins(name, counts, means) for name, counts, means in parts]
        for g, row_index in enumerate(first):
            out[row_index] = _encode(laid, {m: h[g] for m, h in hot.items()}, g)
        return out


class _Bins:
    """One metric's counts (uint32) and means (float32) by group and bin, as bytes, with the
    bins each group keeps: the digest's body cut from them a group at a time, without a
    numpy call a group."""

    def __init__(self, name: str, counts: np.ndarray, means: np.ndarray) -> None:
        self.name = name
        self.counts = np.ascontiguousarray(counts, dtype=np.uint32).tobytes()
        self.means = np.ascontiguousarray(means, dtype=np.float32).tobytes()
        self.row = counts.shape[1] * 4  # bytes a group, of either
        used = counts != 0
        last = counts.shape[1] - np.argmax(used[:, ::-1], axis=1)  # one past the last used
        # REL_BINS, then the absolute bins up to the last used one; none when none is
        self.widths = np.where(used.any(axis=1), REL_BINS + np.maximum(0, last - REL_BINS),
                               0).tolist()

    def body(self, g: int) -> bytes:
        """Group g's counts then means, over its kept bins."""
        at, size = g * self.row, self.widths[g] * 4
        return self.counts[at:at + size] + self.means[at:at + size]


def _groups(cols: dict, rows: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """The digest group of every row of the batch (by file, step and validation; -1 for a
    row not in `rows`), and each group's first row."""
    files = cols[S.FILE]
    file_codes, _ = codes_of(files)
    parts = (file_codes[rows], np.asarray(cols[S.STEP], dtype=np.int64)[rows],
             np.asarray(cols[S.VALIDATION], dtype=np.int64)[rows])
    keys = _packed(*parts)
    _, first, groups = np.unique(keys, axis=0 if keys.ndim == 2 else None,
                                 return_index=True, return_inverse=True)
    group_of_row = np.full(len(files), -1, dtype=np.int64)
    group_of_row[rows] = groups.reshape(-1)
    return group_of_row, rows[first].tolist()


def _packed(files: np.ndarray, steps: np.ndarray, validation: np.ndarray) -> np.ndarray:
    """One int64 a row that sorts as (file, step, validation) do: a 1-D unique is ~10x
    faster than one over rows of three.  Rows of three where the steps span too much."""
    low = int(steps.min()) if len(steps) else 0
    span = int(steps.max()) - low + 1 if len(steps) else 1
    if span >= 1 << 40 or len(files) and int(files.max()) >= 1 << 20:
        return np.stack([files, steps, validation], axis=1)  # np.unique(axis=0) then
    return (files << 41) | ((steps - low) << 1) | validation


Segments = tuple[np.ndarray, Order]  # values, then (row, length) of their samples in order


def _metric_arrays(policy: np.ndarray, reference: np.ndarray, order: Order,
                   extra: dict[str, dict[int, bytes]]) -> dict[str, Segments]:
    """Each stored metric's values over its samples, concatenated, and their (row, n)."""
    out: dict[str, Segments] = {}
    if len(order[0]):
        with np.errstate(over="ignore", invalid="ignore"):
            r = policy - reference
            out["logprob"], out[S.K3] = (policy, order), (kl.k3(r, np.empty_like(r)), order)
    for name, packed in extra.items():
        if packed:
            order = (np.fromiter(packed.keys(), np.int64, len(packed)),
                     np.fromiter(map(len, packed.values()), np.int64, len(packed)) // 8)
            out[name] = (np.frombuffer(b"".join(packed.values()), dtype=np.float64), order)
    return out


def _encode(parts: list[_Bins], hot: dict[str, list], g: int) -> bytes:
    """A JSON header (metrics, bins, hot tokens), a NUL (never in JSON text), then each
    metric's counts (uint32) and means (float32) for this group, without the absolute bins
    past its longest response."""
    names, bins, body = [], [], []
    for part in parts:
        width = part.widths[g]
        if width:
            names.append(part.name)
            bins.append(width)
            body.append(part.body(g))
    for entries in hot.values():
        for entry in entries:
            entry[2:4] = [float(f"{entry[2]:.5g}"), float(f"{entry[3]:.5g}")]
    header = {"v": VERSION, "rel": REL_BINS, "abs_tokens": ABS_TOKENS, "metrics": names,
              "bins": bins, "hot": hot}
    return orjson.dumps(header) + b"\0" + b"".join(body)
