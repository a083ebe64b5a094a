"""Sample page: one response next to its reference, and its tokens."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from loaders import Sample
from loaders import schema as S
from pages import conversation
from pages.figures import compare
from pages.figures.text import literal, strip_pad, strip_system
from pages.figures.token_text import clipped
from pages.loading import recover_stale
from pages.routes import sample_tokens
from pages.view import View


def _choose(view: View, rows: pd.DataFrame) -> str:
    keys = rows[S.KEY].tolist()
    if st.session_state.get("sample") not in (None, *keys):
        del st.session_state["sample"]  # a sample of another step: start at the first
    # the key itself is the label: a bound selectbox keeps its label in the URL
    return st.selectbox("Sample (file:line)", keys, key="sample", bind="query-params")


def _texts(sample: Sample, view: View) -> None:
    opts = view.options
    gap = sample.scalars[S.REWARD] - sample.scalars[S.REF_REWARD]
    c1, c2, c3 = st.columns(3)
    c1.metric("reward", f"{sample.scalars[S.REWARD]:.4g}")
    c2.metric("ref_reward", f"{sample.scalars[S.REF_REWARD]:.4g}")
    c3.metric("reward gap", f"{gap:+.4g}")
    left, mid, right = st.columns(3)
    for column, title, text in (
            (left, "Prompt", strip_system(sample.texts[S.PROMPT], opts.system_marker)),
            (mid, "Response", strip_pad(sample.texts[S.RESPONSE], opts.pad_token)),
            (right, "Reference response", strip_pad(sample.texts[S.REF_RESPONSE], opts.pad_token))):
        column.markdown(f"**{title}**")
        column.code(clipped(text) or "(empty)", language=None, wrap_lines=True, height=320)
    if sample.texts[S.GROUND_TRUTH]:
        st.caption("ground truth")
        st.code(sample.texts[S.GROUND_TRUTH], language=None, wrap_lines=True)


def _lengths(view: View) -> None:
    delta = compare.length_step_delta(view.run.step_stats, view.step)
    cols = st.columns(len(delta))
    for column, (label, (value, change)) in zip(cols, delta.items()):
        column.metric(label, f"{value:,.1f}" if value == value else "—",
                      None if change is None else f"{change:+,.1f} vs previous step")


def render(view: View) -> None:
    rows = view.run.step_rows(view.step)
    st.header(f"Sample · step {view.step}")
    key = _choose(view, rows)
    sample = view.run.sample(key)
    if sample.error:
        # none of the sample's values: a stale one's are not what the index says
        st.error(literal(sample.error))
        if sample.stale:
            recover_stale(view.run, {sample.file})
        return
    _lengths(view)
    _texts(sample, view)
    conversation.show(sample, view)  # multi-turn samples: turns, tool calls, per-turn metrics
    if sample.raw_lengths and len(set(sample.raw_lengths.values())) > 1:
        lengths = ", ".join(f"{k}={v}" for k, v in sample.raw_lengths.items())
        st.warning(f"Length mismatch: {literal(lengths)}; token arrays aligned at the first "
                   "token and cut to the shortest.")
    sample_tokens.show(sample, view)
