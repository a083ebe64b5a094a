"""Prompts page: every prompt over the run (never solved, always solved, regressed, stuck),
and one prompt's group at each step, from the summary index alone."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from loaders import schema as S
from pages.figures import prompts as build
from pages.figures import tables
from pages.figures.search import SearchTooSlow, compile_search
from pages.figures.text import literal
from pages.frame import state
from pages.frame.keys import GROUP
from pages.frame.view import View
from pages.frame.widgets import PERCENT, page_number, picked_row, text_block


def _counts(table: pd.DataFrame) -> None:
    st.html(build.counts_html(build.counts(table)))
    st.caption(f"{len(table):,} prompts (by unpadded prompt text). Flags need a prompt seen at "
               "≥ 2 steps and can overlap; solved = every answer passes, unsolved = none "
               "does, regressed = solved and later at most half passing. Always- and "
               "never-solved prompts are what DAPO's dynamic sampling drops.")


def _table(view: View, table: pd.DataFrame) -> None:
    left, mid, right = st.columns([2, 1, 3])
    sort = left.selectbox("Sort prompts by", list(build.SORTS), key="psort", bind="query-params")
    descending = mid.toggle("Descending", value=True, key="pdesc", bind="query-params")
    regex, error = compile_search(right.text_input(
        "Regex search (prompt's end)", key="pq", bind="query-params",
        help="Each prompt's last 400 characters, as the index keeps them (the question, after "
             "any system prompt): the whole texts would be a read of the whole run. Groups "
             "and Responses search a step's whole prompts."))
    if error:
        st.error(literal(error))
    flags = st.multiselect("Only prompts that are", list(S.PROMPT_FLAGS), key="pflags",
                           bind="query-params")
    try:
        kept = build.filter_prompts(table, tuple(flags), regex)
    except SearchTooSlow as err:  # shown like an invalid pattern: the other filters apply
        st.error(literal(str(err)))
        kept = build.filter_prompts(table, tuple(flags))
    shown = kept.sort_values(
        build.SORTS[sort], ascending=not descending, na_position="last", kind="stable")
    page = page_number(len(shown), "ppage")
    st.caption(f"{len(shown):,} of {len(table):,} prompts{tables.rows_note(len(shown), page)}"
               " · select a row to see its history")
    rows = build.prompt_rows(tables.page_of(shown, page), view.options)
    picked = picked_row(rows, "t_prompts", 420, {build.ID: None, S.PASS_RATE: PERCENT})
    if picked is not None:
        state.select(prompt=rows[build.ID].iloc[picked])


def _history(view: View, table: pd.DataFrame) -> None:
    typed = st.text_input("Prompt id", key="prompt", bind="query-params",
                          placeholder="select a row above")
    if not typed.strip():
        return
    try:
        prompt_id = int(typed)
    except ValueError:
        st.error(literal(f"not a prompt id: {typed[:40]}"))
        return
    steps = view.groups.prompt(prompt_id, view.options.pass_threshold)
    if steps.empty:
        st.warning(literal(f"no prompt {prompt_id} in this run"))
        return
    text_block(str(table[S.PROMPT].get(prompt_id, "")), 200)
    chart = build.history_chart(steps)
    st.vega_lite_chart(chart.data, chart.spec, width="stretch", key="c_prompt")
    rows = build.history_rows(steps)
    st.caption("select a step to open that group")
    picked = picked_row(rows, "t_history", 320, {S.GROUP_ID: None, S.PASS_RATE: PERCENT})
    if picked is not None:
        row = rows.iloc[picked]
        state.go("groups", step=int(row[S.STEP]), **{GROUP: row[S.GROUP_ID]})


def render(view: View) -> None:
    st.header("Prompts across the run")
    _, table = view.groups.history(view.options.pass_threshold)
    if table.empty:
        st.info("No trained samples.")
        return
    _counts(table)
    _table(view, table)
    _history(view, table)
