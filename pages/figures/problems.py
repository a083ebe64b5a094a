"""Pure builders of the problems list: every isolated bad line or field, summarised."""
from __future__ import annotations

import re

import pandas as pd

from pages.figures.text import visible_controls

_DETAIL = re.compile(r"'[^']*'|\"[^\"]*\"|\([^)]*\)|\b\d+(\.\d+)?\b")
COLUMNS = ("file", "line", "reason", "sample")


def kind(reason: str) -> str:
    """A reason without its particulars (values, columns, counts): what groups it."""
    return re.sub(r"\s+", " ", _DETAIL.sub("…", reason)).strip(" :…,") or reason


def table(problems: list[dict]) -> pd.DataFrame:
    """One row per problem: file, line, reason, and whether its sample was kept."""
    return pd.DataFrame({
        "file": [visible_controls(p["file"]) for p in problems],
        "line": pd.array([p["line"] for p in problems], dtype="Int64"),
        "reason": [p["reason"] for p in problems],
        "sample": ["dropped" if p["dropped"] else "kept" for p in problems]},
        columns=list(COLUMNS))


def kinds(problems: list[dict]) -> pd.DataFrame:
    """Problems by kind, most frequent first, with the files they are in."""
    frame = table(problems)
    if frame.empty:
        return pd.DataFrame(columns=["kind", "count", "files"])
    frame["kind"] = frame["reason"].map(kind)
    grouped = frame.groupby("kind", sort=False)
    out = pd.DataFrame({"count": grouped.size(), "files": grouped["file"].nunique()})
    return out.sort_values("count", ascending=False, kind="stable").reset_index()
