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
    out: dict[str, dict] = {}
    by_file = dict(tuple(rows.groupby(S.FILE, observed=True, sort=False))) if len(rows) else {}
    for rel, fmt in list(run.formats.items())[:MAX_FILES]:
        part = by_file.get(rel)
        out[rel] = _empty(run, rel, fmt) if part is None else _file(part, fmt, said, extra)
    return out


def _file(part: pd.DataFrame, fmt: str, said: list[str], extra: list[str]) -> dict:
    fields = [c.removeprefix("extra_") for c in said  # the dump's own key names
              if part[c].astype("string").fillna("").ne("").any()]
    facts = {
        "format": fmt, "samples": len(part),
        "truncation": fields or ["inferred from the length cap"],
        "truncated": int(part[S.TRUNCATED].sum()),
        "truncated_inferred": int(part[S.TRUNCATION_INFERRED].sum()),
        "group": sorted(set(part[S.GROUP_SOURCE].astype(str)) - {""}),
        "validation": int(part[S.VALIDATION].sum()),
    }
    for name in extra:
        facts[name] = sorted(set(part[name].astype("string").dropna()) - {""})
    return facts


def _empty(run: Run, rel: str, fmt: str) -> dict:
    """A file with no sample of its own: read with its group's home file, or empty."""
    group = BY_NAME[fmt].group if fmt in BY_NAME else None
    home = group(run.root / rel, rel)[0] if group else None
    if home is not None and home != run.root / rel:
        return {"format": fmt, "samples": 0, "read_with": str(home.relative_to(run.root))}
    return {"format": fmt, "samples": 0}
