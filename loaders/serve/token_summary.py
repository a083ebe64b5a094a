"""Views across steps from the token digests the index holds (loaders.index.token_digest):
token metrics by position bin and step, and a step's hottest token strings.  Nothing here
reads a dump file: a digest is a few hundred bytes on one row per (file, step, split) group.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import orjson
import pandas as pd

from loaders import schema as S

RELATIVE, ABSOLUTE = "relative", "absolute"
HOT_FIELDS = ("token", "count", "sum", "largest", "offset", "item", "position")


class Digest(NamedTuple):
    step: int
    file: str
    rel: int  # relative bins
    abs_tokens: int  # tokens per absolute bin
    bins: dict[str, tuple[np.ndarray, np.ndarray]]  # metric -> (counts, means)
    hot: dict[str, list[list]]  # metric -> [token, count, sum, largest, offset, item, pos]


def decode(blob: bytes, step: int, file: str) -> Digest | None:
    """A digest, or None when the bytes are not one (an index from elsewhere: never trusted
    further than its shape)."""
    try:
        head, body = blob.split(b"\0", 1)
        meta = orjson.loads(head)
        rel, abs_tokens = int(meta["rel"]), int(meta["abs_tokens"])
        bins, at = {}, 0
        for name, width in zip(meta["metrics"], meta["bins"], strict=True):
            counts = np.frombuffer(body, dtype=np.uint32, count=int(width), offset=at)
            means = np.frombuffer(body, dtype=np.float32, count=int(width), offset=at + 4 * width)
            bins[str(name)], at = (counts, means), at + 8 * int(width)
        hot = {str(m): [list(e) for e in entries if len(e) == len(HOT_FIELDS)]
               for m, entries in dict(meta["hot"]).items()}
    except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        return None
    if rel <= 0 or abs_tokens <= 0 or any(len(c) < rel for c, _ in bins.values()):
        return None
    return Digest(step, file, rel, abs_tokens, bins, hot)


def digests(rows: pd.DataFrame) -> list[Digest]:
    """The digests on these summary rows (a step's, a split's or the whole run's)."""
    if S.TOKEN_DIGEST not in rows:
        return []
    held = rows[rows[S.TOKEN_DIGEST].notna()]
    found = (decode(blob, step, str(file)) for blob, step, file in zip(
        held[S.TOKEN_DIGEST].tolist(), held[S.STEP].tolist(), held[S.FILE].tolist()))
    return [d for d in found if d is not None]


def summary_metrics(found: list[Digest]) -> list[str]:
    """Metrics the digests hold, in the order the index stores them."""
    return list(dict.fromkeys(m for d in found for m in d.bins))


class PositionGrid(NamedTuple):
    steps: list[int]
    starts: list[float]  # first position of each bin (a fraction for relative bins)
    means: np.ndarray  # steps x bins, token-weighted; NaN where no token
    tokens: np.ndarray  # steps x bins: tokens with a finite value


def position_grid(found: list[Digest], metric: str, scale: str = RELATIVE) -> PositionGrid:
    """The metric's token-weighted mean per step (rows) and position bin (columns)."""
    parts = [(d.step, d.rel, d.abs_tokens, *d.bins[metric]) for d in found if metric in d.bins]
    steps = sorted({p[0] for p in parts})
    if not parts:
        return PositionGrid([], [], np.zeros((0, 0)), np.zeros((0, 0)))
    rel, abs_tokens = parts[0][1], parts[0][2]
    width = rel if scale == RELATIVE else max(len(p[3]) - p[1] for p in parts)
    row_of = {step: i for i, step in enumerate(steps)}
    sums, tokens = np.zeros((len(steps), width)), np.zeros((len(steps), width))
    for step, p_rel, _, counts, means in parts:
        part = slice(0, p_rel) if scale == RELATIVE else slice(p_rel, len(counts))
        c, m = counts[part].astype(np.float64)[:width], means[part].astype(np.float64)[:width]
        use = (c > 0) & np.isfinite(m)
        tokens[row_of[step], :len(c)] += np.where(use, c, 0.0)
        sums[row_of[step], :len(c)] += np.where(use, c * np.where(use, m, 0.0), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(tokens > 0, sums / tokens, np.nan)
    starts = ([i / rel for i in range(width)] if scale == RELATIVE
              else [i * abs_tokens for i in range(width)])
    return PositionGrid(steps, starts, means, tokens)


def hot_tokens(found: list[Digest], metric: str, keys: pd.DataFrame, k: int = 30
               ) -> pd.DataFrame:
    """The token strings carrying the most of the metric among the digests' top tokens:
    count, sum, mean and largest, and the sample (key) and position of the largest.

    `keys` are the summary rows the examples are looked up in (file, offset, item -> key).
    """
    table: dict[str, list] = {}
    for d in found:
        for token, count, total, largest, offset, item, pos in d.hot.get(metric, []):
            entry = table.setdefault(str(token), [str(token), 0, 0.0, -np.inf, "", 0, 0])
            entry[1] += int(count)
            entry[2] += float(total)
            if float(largest) > entry[3]:
                entry[3:] = [float(largest), d.file, (int(offset), int(item)), int(pos)]
    ranked = sorted(table.values(), key=lambda e: -e[2])[:k]
    lookup = {(str(f), int(o), int(i)): key for f, o, i, key in zip(
        keys[S.FILE].tolist(), keys[S.OFFSET].tolist(), keys[S.ITEM].tolist(),
        keys[S.KEY].tolist())}
    return pd.DataFrame({
        "token": [e[0] for e in ranked], "count": [e[1] for e in ranked],
        f"{metric} sum": [e[2] for e in ranked],
        f"{metric} mean": [e[2] / e[1] if e[1] else np.nan for e in ranked],
        f"{metric} largest": [e[3] for e in ranked],
        "sample": [lookup.get((e[4], *e[5]), "") if e[4] else "" for e in ranked],
        "position": [e[6] for e in ranked]})
