"""The same prompt across runs (the Compare runs page): the matched-prompt table at a step,
and one prompt opened with each run's answers side by side, a word diff of A's and B's answer
and links to their token views."""
from __future__ import annotations

import html
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from loaders import schema as S
from loaders.serve.runset import (
    AUTO,
    BY_ID,
    BY_TEXT,
    answers,
    match_column,
    matched_prompts,
    nearest_step,
    prompt_summary,
)
from pages.figures import diff
from pages.figures import runs_prompts as build
from pages.figures.groups import head_tail
from pages.figures.text import literal, strip_pad, strip_system
from pages.frame import state
from pages.frame.view import View
from pages.frame.widgets import PERCENT, picked_row, text_block
from pages.routes.runs.choice import Member, forget_stale

PER_ROW = 4  # runs side by side


def _step(members: list[Member]) -> tuple[int, list[int | None]]:
    steps = sorted(set().union(*[m.run.steps for m in members]))
    if len(steps) == 1:
        st.caption(f"Step {steps[0]} (the only one)")
        step = steps[0]
    else:
        forget_stale("runs_step", steps)
        step = st.select_slider("Step", options=steps, value=steps[-1], key="runs_step",
                                bind="query-params")
    at = [nearest_step(m.run.steps, step) for m in members]
    moved = [f"{m.label}: {s}" for m, s in zip(members, at) if s != step]
    if moved:
        st.caption(literal("Nearest step of runs without this one: " + ", ".join(moved)))
    return step, at


def _table(members: list[Member], view: View, a: int, b: int,
           at: list[int | None]) -> tuple[str, pd.DataFrame, pd.DataFrame]:
    """(match column, every matched prompt, the rows the filter keeps)."""
    left, right = st.columns([1, 2])
    how = left.radio("Match prompts by", [AUTO, BY_ID, BY_TEXT], key="match",
                     bind="query-params", horizontal=True)
    column, described = match_column([m.run for m in members], how)
    summaries = [prompt_summary(m.run, -1 if s is None else s, column,
                                view.options.pass_threshold) for m, s in zip(members, at)]
    table = build.ordered(matched_prompts(summaries, a, b))
    counts = build.counts(table, a, b)
    # the filter's name alone as its label: a bound radio writes its label into the link,
    # and a count in it ("B better (25)") made the link stale once the counts moved
    show = right.radio("Show", build.FILTERS, key="pfilter", bind="query-params",
                       horizontal=True)
    right.caption(" · ".join(f"{f} {counts[f]:,}" for f in build.FILTERS))
    st.caption(literal(f"Matched by {described}. {counts['both']:,} prompts in both A and B; "
                       "a prompt's answers at a step are its group: reward mean and pass "
                       "rate over them. Largest |B − A| first; click a header to sort."))
    shown = build.filter_prompts(table, show)
    if len(shown) > build.MAX_ROWS:
        st.caption(f"Showing the first {build.MAX_ROWS:,} of {len(shown):,}.")
    return column, table, shown


def _pick(members: list[Member], view: View, a: int, b: int, shown: pd.DataFrame) -> None:
    rows = build.table_view(shown, [m.label for m in members], a, b, view.options)
    rows = rows.reset_index()
    config = {S.MATCH_KEY: None} | {c: PERCENT for c in rows.columns if c.endswith("pass")} | {
        c: st.column_config.NumberColumn(format=build.POINTS) for c in rows.columns
        if c.startswith("Δ pass")}
    picked = picked_row(rows, "t_runs_prompts", 420, config)
    if picked is not None:
        state.select(rprompt=str(rows[S.MATCH_KEY].iloc[picked]))


def _link(member: Member, step: int, key: str) -> str:
    return "sample?" + urlencode({**member.params, "step": step, "sample": key})


def _runs_side_by_side(members: list[Member], view: View, column: str, key: str,
                       at: list[int | None]) -> dict[int, pd.DataFrame]:
    found = {i: answers(m.run, s, column, key) if s is not None
             else m.run.with_previews(m.run.numbers.step(-1))
             for i, (m, s) in enumerate(zip(members, at))}
    per_row = min(PER_ROW, len(members))
    for start in range(0, len(members), per_row):
        for box, i in zip(st.columns(per_row), range(start, min(start + per_row,
                                                                 len(members)))):
            m, rows = members[i], found[i]
            box.html(f'<b style="color:{m.colour}">■ {html.escape(m.label)}</b> '
                     f"<small>step {at[i]}</small>")
            box.caption(build.summary_line(rows, view.options.kl_estimator))
            if rows.empty:
                continue
            box.dataframe(build.answers_view(rows, view.options.kl_estimator), hide_index=True,
                          width="stretch", height=min(36 * (len(rows) + 1) + 3, 250))
            texts = m.run.texts(rows[S.KEY].head(1).tolist())
            best = rows[S.KEY].iloc[0]
            text = texts[best][S.RESPONSE] if best in texts else "(changed on disk; refresh)"
            box.caption(f"best answer (reward {rows[S.REWARD].iloc[0]:.4g})")
            text_block(head_tail(strip_pad(text, view.options.pad_token)) or "(empty)", 220,
                       box)
            box.link_button("Token view", _link(m, at[i], best), icon=":material/article:")
    return found


def _diff(members: list[Member], view: View, a: int, b: int, found: dict,
          at: list[int | None]) -> None:
    if found[a].empty or found[b].empty or a == b:
        st.caption("A word diff needs an answer from both A and B.")
        return
    st.markdown(f"**Word diff** · {literal(members[a].label)} → {literal(members[b].label)}")
    left, right = st.columns(2)
    forget_stale("ans_a", found[a][S.KEY].tolist())
    forget_stale("ans_b", found[b][S.KEY].tolist())
    key_a = left.selectbox("A's answer", found[a][S.KEY].tolist(), key="ans_a",
                           bind="query-params")
    key_b = right.selectbox("B's answer", found[b][S.KEY].tolist(), key="ans_b",
                            bind="query-params")
    text_a = members[a].run.texts([key_a]).get(key_a, {}).get(S.RESPONSE, "")
    text_b = members[b].run.texts([key_b]).get(key_b, {}).get(S.RESPONSE, "")
    pad = view.options.pad_token
    st.html(diff.diff_html(diff.word_diff(strip_pad(text_a, pad), strip_pad(text_b, pad))))
    left.link_button("A's token view", _link(members[a], at[a], key_a))
    right.link_button("B's token view", _link(members[b], at[b], key_b))


def _opened(members: list[Member], view: View, a: int, b: int, column: str,
            at: list[int | None], table: pd.DataFrame) -> None:
    st.subheader("One prompt across runs")
    key = st.text_input("Prompt (match key)", key="rprompt", bind="query-params",
                        placeholder="select a row above").strip()
    if not key:
        return
    if key not in table.index:
        st.warning(literal(f"No prompt {key[:40]} at these steps; select a row above."))
        return
    found = _runs_side_by_side(members, view, column, key, at)
    first = next((i for i, rows in found.items() if not rows.empty), None)
    if first is not None:
        one = found[first][S.KEY].iloc[0]
        prompt = members[first].run.texts([one]).get(one, {}).get(S.PROMPT, "")
        with st.expander("The prompt"):
            text_block(strip_system(prompt, view.options.system_marker) or "(empty prompt)",
                       160)
    _diff(members, view, a, b, found, at)


def render(members: list[Member], view: View, a: int, b: int) -> None:
    _, at = _step(members)
    column, table, shown = _table(members, view, a, b, at)
    _pick(members, view, a, b, shown)
    _opened(members, view, a, b, column, at, table)
