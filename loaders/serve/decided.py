"""Why the board believes what it shows, per file: the fields that decided each sample's
truncation, group, split and join (`python -m loaders DIR --json`, "decided")."""
from __future__ import annotations

import pandas as pd

from loaders import schema as S
from loaders.formats import BY_NAME
from loaders.index.table import TRUNCATION_FIELDS
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
    """Each file's facts, every file in one grouped pass (a run may have 10,000 files)."""
    files = rows[S.FILE].astype("string")
    counts = rows.assign(**{S.FILE: files}).groupby(S.FILE, sort=False)[
        [S.TRUNCATED, S.TRUNCATION_INFERRED, S.VALIDATION]].agg(["size", "sum"])
    fields = {c: _files_with(rows[c].astype("string").fillna("").ne(""), files) for c in said}
    sources = {c: _texts_by_file(rows[c], files) for c in (S.GROUP_SOURCE, *extra)}
    out = {}
    for rel, row in zip(counts.index.tolist(), counts.itertuples(index=False)):
        samples, truncated, _, inferred, _, validation = row
        named = [c.removeprefix("extra_") for c in said if rel in fields[c]]  # the dump's
        out[rel] = {"samples": int(samples),  # own key names
                    "truncation": named or ["inferred from the length cap"],
                    "truncated": int(truncated), "truncated_inferred": int(inferred),
                    "group": sources[S.GROUP_SOURCE].get(rel, []),
                    "validation": int(validation),
                    **{name: sources[name].get(rel, []) for name in extra}}
    return out


def _files_with(mask: pd.Series, files: pd.Series) -> set[str]:
    return set(files[mask.to_numpy(dtype=bool)].unique().tolist())


def _texts_by_file(column: pd.Series, files: pd.Series) -> dict[str, list[str]]:
    """file -> the column's distinct texts there, but the empty one, sorted."""
    pairs = pd.DataFrame({"file": files, "text": column.astype("string")}).dropna()
    found: dict[str, set[str]] = {}
    for rel, text in pairs.drop_duplicates().itertuples(index=False):
        found.setdefault(rel, set()).add(text)
    return {rel: sorted(texts - {""}) for rel, texts in found.items()}


def _empty(run: Run, rel: str, fmt: str) -> dict:
    """A file with no sample of its own: read with its group's home file, or empty."""
    group = BY_NAME[fmt].group if fmt in BY_NAME else None
    home = group(run.root / rel, rel)[0] if group else None
    if home is not None and home != run.root / rel:
        return {"format": fmt, "samples": 0, "read_with": str(home.relative_to(run.root))}
    return {"format": fmt, "samples": 0}
