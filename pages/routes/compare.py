"""RL vs reference page: reward, length and win rate across steps; prompts RL never beat."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from loaders import schema as S
from pages.figures import compare, ranked_bars, tables
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
    never = compare.without_system(never, view.options.system_marker)
    if once:
        st.caption(f"{once:,} prompts RL did not beat were compared at one step only: left "
                   "out (a prompt needs two steps to say anything about training).")
    if never.empty:
        st.success("RL beat the reference at least once on every prompt compared at two or "
                   "more steps.")
        return
    prompt_id = _picked_prompt(never)
    if prompt_id is None:
        return
    samples = view.run.with_previews(view.run.numbers.matching(S.PROMPT_ID, prompt_id))
    st.dataframe(tables.table_view(samples, view.options), hide_index=True, width="stretch",
                 column_config={tables.KEY: None})
    choice = st.selectbox("Open sample", samples[S.KEY].tolist(), key="w_cmp_open")
    if st.button("Open", key="b_cmp_open"):
        row = samples[samples[S.KEY] == choice]
        state.go("sample", sample=choice, step=int(row[S.STEP].iloc[0]))


def _picked_prompt(never: pd.DataFrame) -> int | None:
    """The widest gaps as bars, every prompt as a table once its expander opens (a data
    grid would load its script on every fresh page); the prompt last picked in either."""
    shown = min(len(never), compare.NEVER_BARS)
    prompts = f"{len(never):,} prompt{'s' * (len(never) != 1)}"
    st.caption(f"{prompts}, worst mean gap first"
               + (f"; the first {shown} as bars" if shown < len(never) else "")
               + " · click one (or a row of the table) to list its samples")
    data, spec = compare.never_beaten_bars(never)
    bars = st.vega_lite_chart(data, spec, key="c_never", on_select="rerun",
                              selection_mode=ranked_bars.PICK, width="stretch")
    rank = ranked_bars.rank_of_pick((bars or {}).get("selection") or {})
    if state.fresh("c_never", rank):
        _remember(never, rank if rank is not None and rank < shown else None)
    box = st.expander(f"All {prompts} as a table", key="cmp_never",
                      on_change="rerun", bind="query-params")
    if box.open:
        table = box.dataframe(never, key="t_never", on_select="rerun",
                              selection_mode="single-row", hide_index=True, width="stretch")
        rows = (table or {}).get("selection", {}).get("rows", [])
        if state.fresh("t_never", tuple(rows)) and rows:  # opening it picks nothing
            _remember(never, rows[0])
    picked = st.session_state.get(_PICKED)
    return picked if picked in set(never[S.PROMPT_ID].tolist()) else None


_PICKED = "_cmp_never_picked"  # session: the prompt id last picked, by a bar or a row


def _remember(never: pd.DataFrame, position: int | None) -> None:
    if position is None:
        st.session_state.pop(_PICKED, None)
    else:
        st.session_state[_PICKED] = int(never[S.PROMPT_ID].iloc[position])


def _never_beaten(view: View) -> tuple[pd.DataFrame, int]:
    """compare.never_beaten_prompts of the run: its numbers kept beside the index (made
    over every sample once per index version), the previews read for the prompts listed."""
    def make() -> tuple[pd.DataFrame, pd.DataFrame]:
        table, once = compare.never_beaten_numbers(view.run.columns(compare.NEVER_BEATEN_READS))
        return table, pd.DataFrame({"once": [once]})
    table, once = view.run.kept_tables(("never_beaten", "never_beaten_once"), make)
    return compare.with_prompt_previews(table, view.run.with_previews), int(once["once"].iloc[0])
