"""Pure filters of the Responses and Groups tables over the conversation summary columns."""
from __future__ import annotations

import pandas as pd

from loaders import schema as S

TOOL_ERRORS = {"any": "any", "errors": "with tool errors", "clean": "without tool errors"}


def has_conversations(rows: pd.DataFrame) -> bool:
    """Whether any of the rows is a multi-turn sample (the filters are shown then)."""
    return S.TURNS in rows and bool(rows[S.TURNS].notna().any())


def tool_names(rows: pd.DataFrame) -> list[str]:
    """The tools the rows called, sorted."""
    found = rows[S.TOOL_NAMES].dropna().astype(str) if S.TOOL_NAMES in rows else []
    return sorted({n for names in found for n in names.split(", ") if n})


def finish_reasons(rows: pd.DataFrame) -> list[str]:
    values = rows[S.LAST_FINISH].dropna().astype(str) if S.LAST_FINISH in rows else []
    return sorted({v for v in values if v})


def conversation_mask(rows: pd.DataFrame, turns: tuple[float, float] | None,
                      tools: tuple[str, ...], errors: str, finish: tuple[str, ...]) -> pd.Series:
    """Rows within the turn range, that called any of `tools`, with or without tool errors
    ("errors" / "clean" / "any") and whose last finish reason is one of `finish`; an empty
    choice keeps every row."""
    keep = pd.Series(True, index=rows.index)
    if not has_conversations(rows):
        return keep
    if turns is not None:
        keep &= rows[S.TURNS].between(*turns)
    if tools:
        called = rows[S.TOOL_NAMES].fillna("").astype(str).str.split(", ")
        keep &= called.map(lambda names: bool(set(names) & set(tools)))
    if errors in ("errors", "clean"):
        erred = rows[S.TOOL_ERRORS].fillna(0) > 0
        keep &= erred if errors == "errors" else ~erred
    if finish:
        keep &= rows[S.LAST_FINISH].fillna("").astype(str).isin(finish)
    return keep
