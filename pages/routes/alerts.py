"""Alerts page: rule hits per step, their evidence, and a way into that step's samples."""
from __future__ import annotations

import streamlit as st

from loaders.health.config import CONFIG_NAME
from pages import state
from pages.figures import health as build
from pages.figures.text import literal
from pages.view import View


def render(view: View) -> None:
    st.header("Alerts")
    health = view.run.health(view.metrics_path)
    for note in health.metrics.notes:
        st.warning(literal(note))
    st.caption(f"Thresholds: rolling median ± k·MAD over the previous "
               f"{int(health.config['baseline']['window'])} steps; override them in "
               f"`{CONFIG_NAME}` in the run dir (see the README).")
    alerts = health.alerts
    if not alerts:
        st.success("No alerts: no rule fired on any step.")
        return
    strong = sum(a.severity == "strong" for a in alerts)
    st.markdown(f"**{strong} strong**, {len(alerts) - strong} weak")
    severity = st.multiselect("Severity", ["strong", "weak"], default=["strong", "weak"],
                              key="severity", bind="query-params")
    shown = [a for a in alerts if a.severity in severity]
    table = build.alerts_table(shown)
    event = st.dataframe(table, key="t_alerts", on_select="rerun", selection_mode="single-row",
                         hide_index=True, width="stretch")
    picked = (event or {}).get("selection", {}).get("rows", [])
    st.caption("Select an alert to open that step's samples.")
    if state.fresh("t_alerts", tuple(picked)) and picked:
        step = int(table["step"].iloc[picked[0]])
        if step in view.run.steps:
            state.go("responses", step=step)
        else:
            st.warning(f"Step {step} has no samples in the dump.")
