"""Filters of the Responses and Groups tables over multi-turn samples (turns, tools called,
tool errors, finish reason), bound to the URL.  Shown only when the step has conversations."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from loaders import schema as S
from pages.figures import turn_filters as build


def _turns(rows: pd.DataFrame, column: st.delta_generator.DeltaGenerator, key: str
           ) -> tuple[float, float] | None:
    turns = rows[S.TURNS].dropna()
    if turns.min() == turns.max():
        return None
    lo, hi = int(turns.min()), int(turns.max())
    picked = column.slider("Turns", lo, hi, (lo, hi), key=key, bind="query-params")
    return float(picked[0]), float(picked[1])


def conversation_filter(rows: pd.DataFrame, prefix: str) -> pd.Series:
    """A keep-mask of the rows by the agent filters (all True without conversations).
    `prefix` keeps the Groups page's URL params apart from the Responses page's."""
    if not build.has_conversations(rows):
        return pd.Series(True, index=rows.index)
    with st.expander("Multi-turn filters", expanded=False):
        left, mid, right, far = st.columns([2, 2, 2, 2])
        turns = _turns(rows, left, f"{prefix}turns")
        tools = mid.multiselect("Called any of these tools", build.tool_names(rows),
                                key=f"{prefix}tools", bind="query-params")
        errors = right.radio("Tool errors", list(build.TOOL_ERRORS), key=f"{prefix}terr",
                             format_func=build.TOOL_ERRORS.get, bind="query-params")
        finish = far.multiselect("Last finish reason", build.finish_reasons(rows),
                                 key=f"{prefix}finish", bind="query-params")
    return build.conversation_mask(rows, turns, tuple(tools), errors or "any", tuple(finish))
