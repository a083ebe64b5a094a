"""Why the board believes what it shows, per file: the fields that decided each sample's
truncation, group, split and join (`python -m loaders DIR --json`, "decided")."""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.formats import BY_NAME
from loaders.index.table import TRUNCATION_FIELDS, holds_text
from loaders.serve.run import Run

JOINED_BY = "joined_by"  # slime/miles: the train file and key a sample was joined by
MAX_FILES = 200  # files described; the rest are counted


def decided(run: Run) -> dict[str, dict]:
    """file -> its format and what decided its samples' flags (see docs/cli.md)."""
    said = [c for c in TRUNCATION_FIELDS if c in run.column_names]
    extra = [c for c in (JOINED_BY,) if c in run.column_names]
    rows = run.columns([S.FILE, S.GROUP_SOURCE, S.TRUNCATED, S.TRUNCATION_INFERRED,
                        S.VALIDATION, *said, *extra])
    facts = _facts_by_file(rows, said, extra) if len(rows) else {}
    out: dict[str, dict] = {}
    for rel, fmt in list(run.formats.items())[:MAX_FILES]:
        out[rel] = {"format": fmt, **facts[rel]} if rel in facts else _empty(run, rel, fmt)
    return out


def _facts_by_file(rows: pd.DataFrame, said: list[str], extra: list[str]) -> dict[str, dict]:
    """Each file's facts, every file in one pass over codes (a run may have 10,000 files
    and a million rows: no text made a row)."""
    files = rows[S.FILE].astype("category")
    codes, names = files.cat.codes.to_numpy(), files.cat.categories.astype(str).tolist()
    count = len(names)
    samples = np.bincount(codes, minlength=count)
    sums = {c: np.bincount(codes[rows[c].to_numpy(dtype=bool)], minlength=count)
            for c in (S.TRUNCATED, S.TRUNCATION_INFERRED, S.VALIDATION)}
    named = {c: set(np.unique(codes[rows[c].astype("string").fillna("").ne("").to_numpy(
        dtype=bool)]).tolist()) if holds_text(rows[c]) else set() for c in said}
    texts = {c: _texts_by_file(codes, rows[c], count) for c in (S.GROUP_SOURCE, *extra)}
    out = {}
    for i in np.flatnonzero(samples).tolist():
        out[names[i]] = {
            "samples": int(samples[i]),
            "truncation": [c.removeprefix("extra_") for c in said if i in named[c]]  # the
            or ["inferred from the length cap"],  # dump's own key names
            "truncated": int(sums[S.TRUNCATED][i]),
            "truncated_inferred": int(sums[S.TRUNCATION_INFERRED][i]),
            "group": texts[S.GROUP_SOURCE][i], "validation": int(sums[S.VALIDATION][i]),
            **{name: texts[name][i] for name in extra}}
    return out


def _texts_by_file(files: np.ndarray, column: pd.Series, count: int) -> list[list[str]]:
    """By file code, the column's distinct texts there but the empty one, sorted: pairs of
    codes made unique, each text made once."""
    values = column.astype("category")
    texts = values.cat.categories.astype(str).tolist()
    value_codes = values.cat.codes.to_numpy()
    width = len(texts) + 1
    pairs = files.astype(np.int64)  # in place from here: a million rows, no copy a step
    pairs *= width
    pairs += value_codes
    if values.hasnans:  # a missing value (code -1) says nothing
        pairs = pairs[value_codes >= 0]
    if count * width <= 4 * len(pairs) + 1024:  # few files and texts: a count a pair
        pairs = np.flatnonzero(np.bincount(pairs, minlength=count * width))
    else:
        pairs = np.unique(pairs)
    out: list[set[str]] = [set() for _ in range(count)]
    for pair in pairs.tolist():
        out[pair // width].add(texts[pair % width])
    return [sorted(found - {""}) for found in out]


def _empty(run: Run, rel: str, fmt: str) -> dict:
    """A file with no sample of its own: read with its group's home file, or empty."""
    group = BY_NAME[fmt].group if fmt in BY_NAME else None
    home = group(run.root / rel, rel)[0] if group else None
    if home is not None and home != run.root / rel:
        return {"format": fmt, "samples": 0, "read_with": str(home.relative_to(run.root))}
    return {"format": fmt, "samples": 0}
