"""The Health page's latency panel: the chosen step's request times, where they went, its
stragglers (a row opens the sample) and response tokens against time."""
from __future__ import annotations

import streamlit as st

from loaders import schema as S
from loaders.health import latency
from loaders.serve import sessions
from pages.figures import latency as build
from pages.frame import state
from pages.frame.view import View
from pages.frame.widgets import picked_row


def latency_panel(view: View) -> None:
    rows = view.run.step_rows(view.step)
    files = sessions.session_files(view.run.formats)
    if files:  # AReaL: the timing is in its session traces, by task_id
        table = view.run.derived("areal_sessions", lambda: sessions.session_table(
            view.run.root, files))
        rows = sessions.with_sessions(rows, table)
    facts = latency.summary(rows)
    if not facts:
        st.info("No request timing at this step: the latency view reads verifiers episodes' "
                "`calls[].time`, slime's `non_generation_time`, AReaL's session traces "
                "(`session_tracer/sessions-r*.jsonl`), or `request_s`, "
                "`generate_s`, `tool_s`, `queue_s`, `start_ts` and `finish_ts` in the "
                "board's own dump.")
        return
    cols = st.columns(min(len(facts), 6))
    for column, (name, value) in zip(cols, list(facts.items())[:6]):
        column.metric(name, f"{value:.1%}" if name.startswith("waiting") else f"{value:,.3g}")
    chart = build.latency_histogram(rows, view.step)
    if chart is None:
        st.caption(f"No request time at step {view.step}.")
    else:
        st.vega_lite_chart(chart.data, chart.spec, width="stretch", key="c_latency")
    binned = latency.tokens_vs_time(rows)  # drawn on request, as a second chart costs
    if binned is not None and st.toggle("Response tokens against time", key="tokens_time",
                                        bind="query-params"):
        chart = build.tokens_time_chart(binned, view.step)
        st.vega_lite_chart(chart.data, chart.spec, width="stretch", key="c_tokens_time")
    slow = latency.stragglers(rows)
    st.caption(f"the slowest {len(slow)} requests of step {view.step} (the tail that holds "
               "the batch back) · select a row to open it")
    picked = picked_row(slow, "t_stragglers", 260, {S.KEY: None})
    if picked is not None:
        state.go("sample", sample=slow[S.KEY].iloc[picked])
