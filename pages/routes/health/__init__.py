"""Health page: stage times, memory, per-rank load, stability and data quality."""
from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from loaders import schema as S
from loaders.health import staleness, views
from loaders.health.check import Health
from loaders.metric_names import clip_fraction_column
from pages.figures import health as build
from pages.figures import staleness as lags
from pages.figures.text import literal
from pages.frame.view import View
from pages.routes.health.latency import latency_panel

LAG_METRICS = ("mismatch_kl_mean", "importance_ratio_mean", S.REWARD)  # where the run has them


def _stages(metrics: pd.DataFrame) -> None:
    stages = views.stage_times(metrics)
    if stages.columns.empty:
        st.info("No stage timers (time/* or timing_s/*) in the training metrics.")
    else:
        chart = build.stage_times_chart(stages)
        st.vega_lite_chart(chart.data, chart.spec, width="stretch", key="c_stages")


def _memory(metrics: pd.DataFrame, step: int) -> None:
    groups = views.memory_columns(metrics)
    if not groups:
        st.info("No memory metrics in the training metrics.")
    else:
        chart = build.memory_chart(metrics, groups, step)
        st.vega_lite_chart(chart.data, chart.spec, width="stretch", key="c_memory")


def _ranks(view: View, metrics: pd.DataFrame) -> None:
    value = st.radio("Per-rank value", list(views.RANK_VALUES), key="rank_value",
                     bind="query-params",
                     horizontal=True)
    name = f"rank_table-{list(views.RANK_VALUES).index(value)}"
    table = view.run.derived_table(name, lambda: views.rank_table_of(view.run.numbers, value))
    for key, chart in (("c_ranks", build.rank_heatmap(table, value)),
                       ("c_devices", build.rank_heatmap(views.device_memory(metrics), "memory"))):
        if len(chart.data):  # no device memory logged: no second map
            st.vega_lite_chart(chart.data, chart.spec, width="stretch", key=key)


def render(view: View) -> None:
    st.header("Health")
    health = view.run.health(view.metrics_path)
    for note in health.metrics.notes:
        st.info(literal(note))
    metrics = health.metrics.frame
    panels: list[Callable[[], None]] = [
        lambda: _stages(metrics), lambda: _memory(metrics, view.step),
        lambda: _ranks(view, metrics),
        lambda: _stability(health, metrics, view.step), lambda: _quality(view, metrics),
        lambda: _staleness(view), lambda: latency_panel(view)]
    # only the open tab is drawn (on_change="rerun" makes the tabs lazy)
    tabs = st.tabs(["Stage times", "Memory", "Per rank", "Stability", "Data quality",
                    "Policy lag", "Latency"], key="panel", bind="query-params",
                   on_change="rerun")
    for tab, panel in zip(tabs, panels):
        if tab.open:
            with tab:
                panel()


def _stability(health: Health, metrics: pd.DataFrame, step: int) -> None:
    clip_name = clip_fraction_column(str(c) for c in metrics.columns)
    clip = metrics[clip_name] if clip_name is not None else None
    strong = tuple(a.step for a in health.alerts if a.severity == "strong")
    panels = build.stability_panels(health.signals, clip, step=step, alerts=strong)
    if not panels:
        st.info("No stability signals in this run.")
    for i, chart in enumerate(panels):
        st.vega_lite_chart(chart.data, chart.spec, width="stretch", key=f"c_stability_{i}")


def _quality(view: View, metrics: pd.DataFrame) -> None:
    table = views.with_aborted(view.run.derived_table(
        "quality", lambda: views.quality_of(view.run.numbers)), None if metrics.empty else metrics)
    for column, (key, chart) in zip(st.columns(2), zip(
            ("c_quality", "c_truncation"), build.quality_panels(table, view.step))):
        column.vega_lite_chart(chart.data, chart.spec, width="stretch", key=key)
    st.dataframe(table, width="stretch")


def _staleness(view: View) -> None:
    """Async RL: how stale each step's samples were, and what the stale ones did."""
    if not staleness.has_lag(view.run.column_names, view.run.step_stats):
        st.info("No policy versions in this dump: the policy lag needs slime/miles "
                "`weight_versions`, AReaL's head/tail version, verifiers' `run.work.policy`, "
                "Tinker's `sampling_client_step`, or `policy_version` in the board's own dump "
                "(verl keeps it in memory only).")
        return
    table = view.run.derived_table("lag_shares",
                                   lambda: staleness.lag_shares_of(view.run.numbers))
    for i, chart in enumerate(lags.lag_panels(table, view.step)):
        st.vega_lite_chart(chart.data, chart.spec, width="stretch", key=f"c_lag_{i}")
    metrics = [S.kl_mean(view.options.kl_estimator), *LAG_METRICS]
    rows = view.run.step_rows(view.step)
    by = staleness.by_lag(rows, metrics)
    if by.empty:
        st.caption(f"No sample of step {view.step} names its policy version.")
        return
    st.dataframe(by, width="stretch")
    # drawn on request: the table above says it, and a chart more costs the browser
    if st.toggle("Chart a metric by lag", key="lag_chart", bind="query-params"):
        shown = st.selectbox("By lag", [m for m in metrics if m in by], key="lag_metric",
                             bind="query-params")
        chart = lags.by_lag_chart(by, shown, view.step)
        st.vega_lite_chart(chart.data, chart.spec, width="stretch", key="c_by_lag")
