"""A token digest's hot tokens: over each group's top tokens by a metric (k3, mismatch_kl),
the token strings with how often they were among them, the metric's sum over those, and the
sample and position of the largest (loaders.index.token_digest keeps HOT_KEEP a group)."""
from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Sequence

import numpy as np

from loaders.index import kernel
from loaders.index.lines import TokenSpans
from loaders.index.token_bins import Layout

HOT_KEEP = 12  # token strings a group keeps per metric
TOKEN_CHARS = 48  # a token string longer than this is cut (a token is a few characters)


def candidates(tokens: np.ndarray) -> np.ndarray:
    """Top tokens of a group's run of samples taken as hot-token candidates (of each run's
    token count)."""
    return np.minimum(256, 4 + tokens // 1024)


class TokenLists:
    """Each part's token column as the batch read it, looked up by row only when a hot
    token needs its strings (a few hundred a group): no list entry a sample."""

    def __init__(self) -> None:
        self._firsts: list[int] = []  # each part's first row, ascending
        self._columns: list[list] = []

    def add(self, first: int, tokens: list) -> None:
        self._firsts.append(first)
        self._columns.append(tokens)

    def token(self, row: int, pos: int) -> object:
        """The row's token at pos; NO_TOKEN where the row has no list or its list no such
        token (a list the C scan left as bytes is read whole: tokens() reads one string)."""
        part = bisect_right(self._firsts, row) - 1
        if part < 0 or row - self._firsts[part] >= len(self._columns[part]):
            return NO_TOKEN
        listed = self._columns[part][row - self._firsts[part]]
        if not isinstance(listed, (list, np.ndarray)) or not 0 <= pos < len(listed):
            return NO_TOKEN
        return listed[pos]

    def tokens(self, rows: np.ndarray, positions: np.ndarray) -> list[object]:
        """token(row, pos) of each pair: a part left as bytes gives its strings in one C call
        (lines.TokenSpans.tokens), not one call a token."""
        out: list[object] = [NO_TOKEN] * len(rows)
        parts = np.searchsorted(np.asarray(self._firsts, np.int64), rows, side="right") - 1
        for part in np.unique(parts).tolist():
            picked = np.flatnonzero(parts == part)
            column = self._columns[part] if part >= 0 else None
            if isinstance(column, TokenSpans):
                at = rows[picked] - self._firsts[part]
                inside = at < len(column)
                got = column.tokens(np.where(inside, at, 0), np.where(inside, positions[picked],
                                                                      -1))
                for i, token in zip(picked.tolist(), got):
                    out[i] = NO_TOKEN if token is None else token
            else:
                for i in picked.tolist():
                    out[i] = self.token(int(rows[i]), int(positions[i]))
        return out


NO_TOKEN = object()  # TokenLists.token's "none there" (a list may hold None itself)


def _top_tokens(values: np.ndarray, layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    """(sample number, offset into values) of the top tokens (value above 0) of each run of
    consecutive samples of one group: candidates(tokens) of them, largest first and a tie
    in token order (so a digest is the same whichever path made it)."""
    change = np.flatnonzero(np.diff(layout.groups)) + 1
    run_starts = np.concatenate(([0], change))
    run_ends = np.concatenate((change, [len(layout.groups)]))
    lows = layout.starts[run_starts]
    highs = (layout.starts + layout.lengths)[run_ends - 1]
    spans = highs - lows
    ks = np.minimum(candidates(spans), spans)
    at = kernel.top_tokens(values, lows, highs, ks)
    if at is None:
        at = _top_by_sort(values, lows.tolist(), highs.tolist(), ks.tolist())
    return np.searchsorted(layout.starts, at, side="right") - 1, at


def _top_by_sort(values: np.ndarray, lows: list[int], highs: list[int], ks: list[int]
                 ) -> np.ndarray:
    """kernel.top_tokens without the build: a stable sort a run."""
    found = []
    for lo, hi, k in zip(lows, highs, ks):
        part = values[lo:hi]
        scored = np.where(np.isfinite(part) & (part > 0), part, -np.inf)
        top = np.argsort(-scored, kind="stable")[:k]
        found.append(lo + top[scored[top] > -np.inf])
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


def hot_entries(values: np.ndarray, layout: Layout, tokens: TokenLists,
                where: tuple[Sequence, Sequence | None], groups: int,
                places: dict[int, np.ndarray]) -> list[list]:
    """Per group, its HOT_KEEP token strings by the metric's sum over the group's top
    tokens: [token, count, sum, largest, offset, item, position] each."""
    found: list[dict[str, list]] = [{} for _ in range(groups)]
    samples, at = _top_tokens(values, layout)
    positions = at - layout.starts[samples]
    rows = layout.rows[samples]
    for group, row, pos, value, token in zip(layout.groups[samples].tolist(), rows.tolist(),
                                             positions.tolist(), values[at].tolist(),
                                             tokens.tokens(rows, positions)):
        if token is NO_TOKEN:
            continue
        text = str(token)[:TOKEN_CHARS]
        entry = found[group].setdefault(text, [text, 0, 0.0, -1.0, 0, 0, 0])
        entry[1] += 1
        entry[2] += value
        if value > entry[3]:
            place = int(places[row][pos]) if row in places else pos
            offsets, items = where
            item = items[row] if items is not None and items[row] is not None else 0
            entry[3:] = [value, int(offsets[row]), int(item), place]
    return [list(table.values()) if len(table) <= HOT_KEEP else
            heapq.nlargest(HOT_KEEP, table.values(), key=lambda e: e[2]) for table in found]
