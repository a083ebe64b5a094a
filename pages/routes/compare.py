"""RL vs reference page: reward, length and win rate across steps; prompts RL never beat."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from loaders import schema as S
from pages.figures import compare, tables
from pages.frame import state
from pages.frame.view import View


def render(view: View) -> None:
    st.header("RL vs reference")
    stats = view.run.step_stats
    smoothing = st.slider("EMA smoothing", 0.0, 0.99, 0.0, 0.01, key="cmp_ema", bind="query-params")
    st.caption(compare.panels_title(smoothing))
    for i, (data, spec) in enumerate(compare.rl_vs_ref_panels(stats, smoothing, view.step)):
        st.vega_lite_chart(data, spec, width="stretch", key=f"c_cmp_{i}")
    # drawn only once opened: a closed expander's contents still cost the browser
    box = st.expander("Per-step table", key="cmp_table", on_change="rerun",
                      bind="query-params")
    if box.open:
        box.dataframe(compare.rl_vs_ref_table(stats), width="stretch")
    st.subheader("Prompts where RL never beat the reference")
    if stats.empty or stats[S.stat(S.REF_REWARD, "mean")].isna().all():
        st.info("No reference: this dump has no ref_reward.")
        return
    never, once = view.run.derived("never_beaten", lambda: _never_beaten(view))
    if once:
        st.caption(f"{once:,} prompts RL did not beat were compared at one step only: left "
                   "out (a prompt needs two steps to say anything about training).")
    if never.empty:
        st.success("RL beat the reference at least once on every prompt compared at two or "
                   "more steps.")
        return
    event = st.dataframe(never, key="t_never", on_select="rerun", selection_mode="single-row",
                         hide_index=True, width="stretch")
    picked = (event or {}).get("selection", {}).get("rows", [])
    if not picked:
        st.caption(f"{len(never)} prompts · select one to list its samples")
        return
    prompt_id = never[S.PROMPT_ID].iloc[picked[0]]
    samples = view.run.with_previews(view.run.numbers.matching(S.PROMPT_ID, prompt_id))
    st.dataframe(tables.table_view(samples, view.options), hide_index=True, width="stretch",
                 column_config={tables.KEY: None})
    choice = st.selectbox("Open sample", samples[S.KEY].tolist(), key="w_cmp_open")
    if st.button("Open", key="b_cmp_open"):
        row = samples[samples[S.KEY] == choice]
        state.go("sample", sample=choice, step=int(row[S.STEP].iloc[0]))


def _never_beaten(view: View) -> tuple[pd.DataFrame, int]:
    """compare.never_beaten_prompts of the run: its numbers kept beside the index (made
    over every sample once per index version), the previews read for the prompts listed."""
    def make() -> tuple[pd.DataFrame, pd.DataFrame]:
        table, once = compare.never_beaten_numbers(view.run.columns(compare.NEVER_BEATEN_READS))
        return table, pd.DataFrame({"once": [once]})
    table, once = view.run.kept_tables(("never_beaten", "never_beaten_once"), make)
    return compare.with_prompt_previews(table, view.run.with_previews), int(once["once"].iloc[0])
