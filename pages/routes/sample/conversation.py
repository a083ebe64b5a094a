"""The conversation view of a multi-turn (agentic) sample, under the Sample page.

Turns are chat bubbles by role; tool calls show their name and pretty-printed arguments,
tool outputs and <think> blocks are collapsed expanders.  Every text from the dump goes
through st.text / st.code (never Markdown or HTML); labels and captions hold none (Markdown
autolinks a URL even when its punctuation is escaped).
Token metrics are per assistant turn, over its trained tokens only.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from loaders import Sample
from loaders import schema as S
from pages.figures import conversation as build
from pages.figures.conversation import Turn
from pages.figures.text import literal
from pages.frame.view import View

NONE = "(none)"


def _choices() -> set[str]:
    shown = st.pills("Show", build.SHOW_OPTIONS, selection_mode="multi",
                     default=list(build.SHOW_OPTIONS), key="conv", bind="query-params")
    return set(shown or ())


def _page(turns: int) -> tuple[int, int]:
    first, end, pages = build.page_of(turns, 1)
    if pages == 1:
        return first, end
    page = st.number_input(f"Turns page (of {pages}, {build.TURNS_PER_PAGE} turns each)",
                           min_value=1, max_value=pages, value=1, step=1, key="conv_page",
                           bind="query-params")
    first, end, _ = build.page_of(turns, int(page))
    return first, end


def _text(turn: Turn, show: set[str]) -> None:
    if turn["reasoning"] and "reasoning" in show:
        with st.expander(f"thinking · {len(turn['reasoning']):,} characters", expanded=False):
            st.text(build.clipped(turn["reasoning"]))
    for part in build.parts_of(turn["text"]):
        if part.kind == "think":
            if "reasoning" in show:
                with st.expander(f"thinking · {len(part.text):,} characters", expanded=False):
                    st.text(build.clipped(part.text))
        elif part.text.strip() and "messages" in show:
            st.text(build.clipped(part.text))


def _calls(turn: Turn) -> None:
    for call in turn["tool_calls"]:
        # st.text, not a caption: Markdown would autolink a URL in a name even escaped
        st.text(f"tool call: {call['name'] or '(no name)'}")
        text, language = build.arguments_shown(call)
        st.code(build.clipped(text), language=language, wrap_lines=True)


def _tool_output(turn: Turn) -> None:
    # the label holds no text from the dump (a Markdown label autolinks URLs)
    label = (f"{'tool error' if turn['error'] else 'tool output'}"
             f" · {len(turn['text']):,} characters")
    with st.expander(label, expanded=False):
        st.text(build.clipped(turn["text"]))


def _bubble(turn: Turn, metrics: pd.Series, show: set[str], kl: str) -> None:
    with st.chat_message(turn["role"], avatar=build.ROLE_ICONS[turn["role"]]):
        if turn["role"] == "tool":
            if "tool outputs" in show:
                _tool_output(turn)
        elif "messages" in show or turn["role"] == "assistant" and "reasoning" in show:
            _text(turn, show)
        if turn["tool_calls"] and "tool calls" in show:
            _calls(turn)
        if "metadata" in show:
            line = " · ".join(p for p in (build.metadata_line(turn),
                                          build.metric_line(metrics, kl)) if p)
            if line:
                st.text(line)  # literal: names and ids from the dump


def _metrics_table(metrics: pd.DataFrame, kl: str) -> None:
    assistant = metrics[metrics["role"] == "assistant"]
    if assistant["tokens"].notna().any():
        chart = build.turn_chart(metrics, kl)
        if chart is not None:  # a Vega chart: the Plotly charts below are the token strips
            st.bar_chart(chart, height=200, stack=False, x_label="assistant turn")
        st.caption(f"Per assistant turn, over its trained tokens only (KL {literal(kl)}); "
                   "masked tokens (tool outputs, user turns, template) are in no mean.")
        st.dataframe(assistant.rename(columns={"kl": f"kl ({kl})"}), hide_index=True,
                     height=min(400, 38 + 35 * len(assistant)))
    else:
        st.caption("This sample has no per-token turn index: token metrics per turn are not "
                   "known.")


def _other(view: View, sample: Sample) -> Sample | None:
    """Another trajectory of the step to show beside this one, when one is chosen."""
    rows = view.run.step_rows(view.step)
    keys = [k for k in rows.loc[rows[S.TURNS].notna(), S.KEY] if k != sample.key]
    if not keys:
        return None
    if st.session_state.get("conv_b") not in (None, NONE, *keys):
        del st.session_state["conv_b"]  # a sample of another step
    choice = st.selectbox("Compare with another trajectory of this step", [NONE, *keys],
                          key="conv_b", bind="query-params")
    if choice in (None, NONE):
        return None
    other = view.run.sample(choice)
    if other.error:
        st.error(literal(other.error))
        return None
    return other


def _trajectory(sample: Sample, view: View, show_parts: set[str], span: tuple[int, int]
                ) -> None:
    kl = view.options.kl_estimator
    metrics = build.turn_metrics(sample.tokens, sample.turns, kl)
    _metrics_table(metrics, kl)
    for index in range(span[0], min(span[1], len(sample.turns))):
        _bubble(sample.turns[index], metrics.iloc[index], show_parts, kl)


def show(sample: Sample, view: View) -> None:
    """The conversation of a multi-turn sample (nothing for a single-turn one), and another
    trajectory of the step side by side when one is chosen."""
    if not sample.turns:
        return
    st.subheader(f"Conversation · {len(sample.turns)} turns")
    other = _other(view, sample)
    show_parts = _choices()
    span = _page(max(len(sample.turns), len(other.turns) if other else 0))
    if other is None:
        _trajectory(sample, view, show_parts, span)
        return
    for column, shown in zip(st.columns(2), (sample, other)):
        with column:
            st.text(f"{shown.key} · reward {shown.scalars[S.REWARD]:.4g} · "
                    f"{len(shown.turns)} turns")
            _trajectory(shown, view, show_parts, span)
