"""Groups page: the chosen step's GRPO groups, and one group opened answer by answer."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from loaders import schema as S
from loaders.serve.groups import StepGroups
from pages.figures import groups as build
from pages.figures.search import SearchTooSlow, compile_search
from pages.figures.text import literal
from pages.frame import state
from pages.frame.keys import GROUP
from pages.frame.loading import checked_texts
from pages.frame.view import View
from pages.frame.widgets import PERCENT, picked_row
from pages.routes.groups import answers
from pages.routes.response_clusters import cluster_filter
from pages.routes.sample.conversation_filters import conversation_filter


def _mix(found: StepGroups) -> None:
    mix = found.mix
    total = max(mix["groups"], 1)
    cols = st.columns(5)
    cols[0].metric("groups", f"{mix['groups']:,}")
    cols[1].metric("no signal", f"{mix[S.NO_SIGNAL]:,}", help=build.NO_SIGNAL_HELP)
    cols[1].caption(f"{mix[S.ZERO_VARIANCE]:,} zero variance · "
                    f"{mix[S.UNDER_TWO_REWARDS]:,} under two rewards")
    for column, (name, label) in zip(cols[2:], (("solved", "solved (all pass)"),
                                                 ("unsolved", "unsolved (none pass)"),
                                                 ("mixed", "mixed"))):
        column.metric(label, f"{mix[name]:,}", help=f"{mix[name] / total:.0%} of the groups")
        column.caption(f"{mix[name] / total:.0%} of groups")


def _caption(view: View, found: StepGroups) -> None:
    parts = [f"advantage: {found.advantage_source}", f"pass: {found.pass_rule}",
             f"groups by: {_sources(view)}"]
    if found.left_out_samples:
        shown = "shown, and in these statistics" if view.options.show_left_out else "hidden"
        parts.append(f"{found.left_out_samples} left-out samples at this step ({shown}); "
                     f"{found.left_out_groups} groups left out entirely")
    st.caption(literal(" · ".join(parts)))


def _sources(view: View) -> str:
    rows = view.groups.trained_rows(view.step)
    sources = rows[S.GROUP_SOURCE].astype(str).value_counts()
    return ", ".join(f"{_SOURCE_LABELS.get(name, name)} ({n})"
                     for name, n in sources.items()) or "—"


# the dump holds no group id (verl's own lines have no uid): said plainly, not as a field
_SOURCE_LABELS = {S.GROUP_BY_PROMPT: "the prompt text (the dump holds no group id: groups "
                                     "rebuilt from it)"}


def _controls() -> tuple[str, bool, tuple[str, ...], str]:
    choices = build.sort_choices()
    left, mid, right = st.columns([2, 1, 3])
    sort = left.selectbox("Sort groups by", list(choices), key="gsort", bind="query-params")
    descending = mid.toggle("Descending", value=True, key="gdesc", bind="query-params")
    pattern = right.text_input("Regex search (prompt)", key="gq", bind="query-params")
    flags = st.multiselect("Only groups that are", list(build.FILTERS), key="gflags",
                           format_func=build.FILTERS.get, bind="query-params")
    return choices[sort], descending, tuple(flags), pattern


def _table(view: View, table: pd.DataFrame) -> None:
    column, descending, flags, pattern = _controls()
    regex, error = compile_search(pattern)
    if error:
        st.error(literal(error))
    groups = _agent_groups(view, table)
    try:
        kept = build.filter_groups(groups, flags, regex,
                                   None if regex is None else _full_prompts(view))
    except SearchTooSlow as err:  # shown like an invalid pattern: the other filters apply
        st.error(literal(str(err)))
        kept = build.filter_groups(groups, flags)
    shown = kept.sort_values(
        column, ascending=not descending, na_position="last", kind="stable")
    st.caption(f"{len(shown)} of {len(table)} groups · select a row to open the group")
    rows = build.group_rows(shown, view.options)
    picked = picked_row(rows, "t_groups", 460, {build.ID: None, S.PASS_RATE: PERCENT,
                                                S.TRUNCATED_SHARE: PERCENT})
    if picked is not None:
        state.select(**{GROUP: rows[build.ID].iloc[picked]})


def _full_prompts(view: View) -> dict[int, str]:
    """Each group's whole prompt (its first answer's), which the search reads as Responses'
    does: the index keeps a prompt's last 400 characters."""
    found = checked_texts(view.run, view.run.step_texts(view.step))
    first = view.groups.rows(view.step, view.group_options).drop_duplicates(S.GROUP_ID)
    return {group: found[key][S.PROMPT] for group, key in zip(
        first[S.GROUP_ID].tolist(), first[S.KEY].tolist()) if key in found}


def _agent_groups(view: View, table: pd.DataFrame) -> pd.DataFrame:
    """The groups with an answer that passes the multi-turn filters and is in the chosen
    response cluster (all without them)."""
    rows = view.groups.rows(view.step, view.group_options)  # with a conversation's columns
    keep = conversation_filter(rows, "g") & cluster_filter(view, rows, "gcluster")
    return table if keep.all() else table[table.index.isin(rows.loc[keep, S.GROUP_ID])]


def render(view: View) -> None:
    st.header(f"Groups · step {view.step}")
    found = view.groups.step(view.step, view.group_options)
    if found.table.empty:
        st.info("No trained samples at this step.")
        return
    _mix(found)
    _caption(view, found)
    _table(view, found.table)
    answers.render(view, found.table)
    # drawn only once opened: a closed expander's chart would still load Vega's script
    # into a page that has no other chart, and read every step's groups
    box = st.expander("Group mix over the run", key="gmix", on_change="rerun",
                      bind="query-params")
    if box.open:
        steps, _ = view.groups.history(view.options.pass_threshold)
        chart = build.mix_chart(steps, view.step)
        box.vega_lite_chart(chart.data, chart.spec, width="stretch", key="c_mix")
