"""Metrics page: every scalar training metric, grouped by prefix, with a glossary."""
from __future__ import annotations

import streamlit as st

from loaders.health.check import Health
from pages.figures import metrics as build
from pages.figures.text import literal
from pages.frame.view import View

MAX_CHARTS = 24  # per group shown at once: more charts than this make every rerun slow


def _notes(health: Health) -> None:
    for note in health.metrics.notes:
        st.info(literal(note))


def render(view: View) -> None:
    st.header("Metrics")
    health = view.run.health(view.metrics_path)
    _notes(health)
    frame = health.metrics.frame
    if not health.metrics.names:
        st.info("No training metrics found in the run dir. Point *Training metrics* in the "
                "sidebar at the trainer's logs (verl file or console logs, ROLL logs, "
                "prime-rl metrics.jsonl, TensorBoard events or any jsonl with a step key).")
        return
    left, mid, right = st.columns([3, 2, 1])
    pattern = left.text_input("Filter metrics (regex)", key="filter", bind="query-params")
    smoothing = mid.slider("EMA smoothing", 0.0, 0.99, 0.0, 0.01, key="metric_ema",
                           bind="query-params")
    x_axis = right.radio("x axis", build.x_axis_options(frame), key="x", bind="query-params",
                         horizontal=True)
    try:
        groups = build.group_metrics(health.metrics.names, pattern)
    except ValueError as err:
        st.error(literal(str(err)))
        return
    if not groups:
        st.warning("No metric matches the filter.")
        return
    # a selectbox, not a radio: a bound choice writes its shown label to the URL, and a
    # radio's label is Markdown (a name from the logs must be escaped to show as written),
    # so the URL held the escaped name; a selectbox shows its options as plain text
    group = st.selectbox("Group", list(groups), key="group", bind="query-params",
                         help=literal(" · ".join(f"{g}: {len(n)}" for g, n in groups.items())))
    names = groups.get(group, [])
    if len(names) > MAX_CHARTS:
        st.caption(f"Showing {MAX_CHARTS} of {len(names)} metrics; narrow the filter.")
    columns = st.columns(2)
    for i, name in enumerate(names[:MAX_CHARTS]):
        with columns[i % 2]:
            st.text(name, help=build.metric_help(name))  # a name is data, never markdown
            chart = build.metric_chart(frame, name, smoothing=smoothing, x_axis=x_axis,
                                       step=view.step)
            st.vega_lite_chart(chart.data, chart.spec, width="stretch", key=f"c_metric_{name}")
