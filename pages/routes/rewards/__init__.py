"""Rewards page: step curves against the reference, and the chosen step's distribution."""
from __future__ import annotations

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from loaders import schema as S
from loaders.health import rewards as rewards_parts
from pages.figures import distributions as spread
from pages.figures import rewards as build
from pages.figures.step_panels import PICK, Panel
from pages.frame import keys, state
from pages.frame.keys import STEP
from pages.frame.view import View
from pages.routes.rewards import components


def _alert_steps(view: View) -> tuple[int, ...]:
    """The steps of the run's strong alerts, marked on the reward and KL curves."""
    return tuple(alert.step for alert in view.run.health(view.metrics_path).alerts
                 if alert.severity == "strong")


def _curve(chart: Panel, key: str) -> None:
    """Show a step curve (Vega-Lite); a click picks the nearest step for every page."""
    event = st.vega_lite_chart(chart.data, chart.spec, key=key, on_select="rerun",
                               selection_mode=PICK, width="stretch")
    step = build.selected_step((event or {}).get("selection") or {})
    if state.fresh(key, step) and step is not None and step != st.session_state.get(STEP):
        state.select(step=step)


def render(view: View) -> None:
    stats = view.run.step_stats
    st.header("Rewards")
    left, mid, right = st.columns(3)
    band_k = left.slider("Band: ± k·std", 0.0, 3.0, 1.0, 0.25, key="band", bind="query-params")
    smoothing = mid.slider("EMA smoothing", 0.0, 0.99, 0.0, 0.01, key="ema", bind="query-params",
                           help="TensorBoard's debiased EMA; the raw curve stays faint below")
    zero_shift = right.toggle("Zero-shift curves", key="zero", bind="query-params")
    est = view.options.kl_estimator
    rows = view.run.step_rows(view.step)
    names = rewards_parts.components(rows)  # the reward's components, where the dump has them
    # only the open tab is drawn: each chart costs the browser its drawing
    tabs = st.tabs(["Reward", "KL", "Response length", "Win rate"] + ["Components"] * bool(names),
                   key="chart", bind="query-params", on_change="rerun")
    curve = {"band_k": band_k, "smoothing": smoothing, "zero_shift": zero_shift,
             "step": view.step}
    if tabs[0].open:
        with tabs[0]:
            if stats[S.stat(S.REWARD, "mean")].isna().all():  # prime-rl's token exports
                st.info("No reward: this dump holds no reward per sample.")
            else:
                _curve(build.reward_curves(stats, **curve, alerts=_alert_steps(view)),
                       "c_reward")
    if tabs[1].open:
        with tabs[1]:
            if stats[S.stat(S.kl_mean(est), "mean")].isna().all():
                st.info("No KL: this dump has no logprobs and ref_logprobs per token.")
            else:
                _curve(build.step_curve(stats, S.kl_mean(est), title=f"per-token KL ({est}) "
                                        "mean", **curve, alerts=_alert_steps(view)), "c_kl")
    if tabs[2].open:
        with tabs[2]:
            _curve(build.step_curve(stats, S.RESPONSE_LEN, title="response length (tokens)",
                                    **curve), "c_len")
    if tabs[3].open:
        with tabs[3]:
            _curve(build.win_rate_curve(stats, smoothing=smoothing, step=view.step), "c_win")
    if names and tabs[4].open:
        with tabs[4]:
            components.over_the_run(view, names, rows)
    _step_section(view, rows, names)


def _step_section(view: View, rows: pd.DataFrame, parts: list[str]) -> None:
    st.subheader(f"Step {view.step}: {len(rows):,} samples")
    table = view.groups.step(view.step, view.group_options).table
    grouped = bool(len(table)) and bool(table[S.GROUP_SIZE].max() >= 2)
    names = (["Histogram", "ECDF", "Reward gap"] + ["Group means"] * grouped
             + ["Components"] * bool(parts))
    # one chart at a time, as above: a fresh page draws two charts, not five
    tabs = dict(zip(names, st.tabs(names, key="dist", bind="query-params", on_change="rerun")))
    if tabs["Histogram"].open:  # a bar clicked opens its samples in Responses
        _histogram(tabs["Histogram"], rows, view)
    if tabs["ECDF"].open:
        ecdf = spread.reward_ecdf(rows)
        tabs["ECDF"].vega_lite_chart(ecdf.data, ecdf.spec, width="stretch", key="c_ecdf")
    if tabs["Reward gap"].open:
        gap = spread.reward_gap_curve(rows)
        if gap is None:
            tabs["Reward gap"].caption("No reward gap: no sample at this step has both reward "
                                       "and ref_reward.")
        else:
            tabs["Reward gap"].vega_lite_chart(gap.data, gap.spec, width="stretch", key="c_gap")
    if grouped and tabs["Group means"].open:
        with tabs["Group means"]:
            means = spread.group_means(table)
            if means is None:
                st.caption("No group has a finite reward mean at this step.")
            else:
                st.vega_lite_chart(means.data, means.spec, width="stretch", key="c_groups")
            st.page_link(st.session_state[keys.PAGES]["groups"], label="Open the groups",
                         icon=":material/workspaces:")
    if parts and tabs["Components"].open:
        with tabs["Components"]:
            components.at_the_step(view, parts, rows)


def _histogram(box: DeltaGenerator, rows: pd.DataFrame, view: View) -> None:
    chart = build.reward_histogram(rows)
    if chart is None:
        box.caption("No finite reward at this step.")
        return
    event = box.vega_lite_chart(chart.data, chart.spec, width="stretch", key="c_hist",
                                on_select="rerun", selection_mode=build.BIN)
    picked = build.picked_bin((event or {}).get("selection") or {})
    if picked is not None:
        components.open_bin(*picked, view)
