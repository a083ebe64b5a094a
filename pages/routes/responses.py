"""Responses page: the step's samples as a sortable, searchable, filterable table."""
from __future__ import annotations

import html
import math
import re

import numpy as np
import pandas as pd
import streamlit as st

from loaders import schema as S
from pages import state
from pages.figures import tables
from pages.figures.text import compile_search, highlight, literal
from pages.loading import recover_stale
from pages.view import View

MAX_MATCHES = 50


def _controls(view: View, rows: pd.DataFrame) -> tuple[str, bool, str]:
    choices = tables.sort_choices(view.options.kl_estimator)
    left, mid, right = st.columns([2, 1, 3])
    sort_label = left.selectbox("Sort by", list(choices) + ["(any column)"], key="sort",
                                bind="query-params")
    column = choices.get(sort_label)
    if column is None:
        column = left.selectbox("Column", [c for c in rows.columns if c not in (S.FILE,)],
                                key="col", bind="query-params")
    descending = mid.toggle("Descending", value=True, key="desc", bind="query-params")
    pattern = right.text_input("Regex search (prompt and response)", key="q", bind="query-params")
    return column, descending, pattern


def _filters(rows: pd.DataFrame) -> tuple[tuple[float, float] | None, tuple[str, ...]]:
    reward = rows[S.REWARD][np.isfinite(rows[S.REWARD].to_numpy(dtype=float))]
    left, right = st.columns(2)
    reward_range = None
    if len(reward) and reward.min() < reward.max():
        lo = float(math.floor(reward.min() * 100) / 100)
        hi = float(math.ceil(reward.max() * 100) / 100)
        reward_range = left.slider("Reward range", lo, hi, (lo, hi), key="reward",
                                   bind="query-params")
    flags = right.multiselect("Only samples flagged", list(tables.FLAG_LABELS),
                              format_func=tables.FLAG_LABELS.get, key="flags", bind="query-params")
    return reward_range, tuple(flags)


def render(view: View) -> None:
    rows = view.run.step_rows(view.step)
    st.header(f"Responses · step {view.step}")
    column, descending, pattern = _controls(view, rows)
    reward_range, flags = _filters(rows)
    regex, error = compile_search(pattern)
    if error:
        st.error(literal(error))
    texts = _full_texts(view) if regex else None
    shown = tables.sort_rows(tables.filter_rows(rows, reward_range, flags, regex, texts),
                             column, descending)
    st.caption(f"{len(shown)} of {len(rows)} samples · select a row to open it")
    table = tables.table_view(shown, view.options)
    event = st.dataframe(table, key="t_responses", on_select="rerun",
                         selection_mode="single-row", hide_index=True, width="stretch",
                         height=min(36 * (len(table) + 1) + 3, 640),
                         column_config={tables.KEY: None})
    selected = (event or {}).get("selection", {}).get("rows", [])
    if state.fresh("t_responses", tuple(selected)) and selected:
        state.go("sample", sample=table[tables.KEY].iloc[selected[0]])
    if regex:
        _matches(shown, texts, regex)


def _full_texts(view: View) -> dict:
    found = view.run.step_texts(view.step)
    if found.stale:
        # their samples are left out of the search: what the files hold now belongs to no
        # row of this table
        names = ", ".join(sorted(found.stale))
        st.error(literal(f"{names}: changed on disk since it was indexed; its samples are "
                         "left out of the search until it is read again"))
        recover_stale(view.run, found.stale)
    return {key: texts[S.PROMPT] + "\n" + texts[S.RESPONSE] for key, texts in found.items()}


def _matches(shown: pd.DataFrame, texts: dict[str, str], regex: re.Pattern) -> None:
    keys = shown[S.KEY].tolist()[:MAX_MATCHES]
    if not keys:  # st.html refuses an empty body
        st.caption("No sample matches the search.")
        return
    with st.expander(f"Matches in {len(shown)} samples (first {len(keys)} shown)",
                     expanded=True):
        st.html("".join(f'<div class="match"><b>{html.escape(key)}</b>'
                        f' — {highlight(texts.get(key, ""), regex)}</div>' for key in keys))
