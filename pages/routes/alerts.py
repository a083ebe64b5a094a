"""Alerts page: incidents (consecutive hits of one rule), each expanding into its steps;
a step opens its samples sorted to show the evidence."""
from __future__ import annotations

import streamlit as st

from loaders.health.config import CONFIG_NAME
from loaders.health.incidents import Incident, incidents
from pages.figures import alerts as build
from pages.figures.text import literal
from pages.frame import state
from pages.frame.view import View

MAX_INCIDENTS = 50  # expanders drawn; the table above lists every incident
OPEN_STRONG = 3  # the first strong incidents start open (a grid each: the page stays light)


def render(view: View) -> None:
    st.header("Alerts")
    health = view.run.health(view.metrics_path)
    for note in health.metrics.notes:
        st.warning(literal(note))
    base = health.config["baseline"]
    st.caption(f"Each signal is compared with its robust linear trend over the previous "
               f"{int(base['window'])} steps, in spreads that include the standard error of "
               f"a mean over the step's samples. One signal past its threshold once is weak; "
               f"strong needs signals that agree, or one that is extreme and persists. "
               f"Thresholds: `{CONFIG_NAME}` in the run dir (see docs/metrics-and-alerts.md).")
    found = incidents(health.alerts)
    if not found:
        _none_fired(len(health.signals), int(base["min_history"]))
        return
    severity = st.multiselect("Severity", ["strong", "weak"], default=["strong", "weak"],
                              key="severity", bind="query-params")
    shown = [i for i in found if i.severity in severity]
    strong = sum(i.severity == "strong" for i in found)
    steps = len({a.step for a in health.alerts})
    st.markdown(f"**{len(found)} incidents** ({strong} strong) at {steps} "
                f"step{'s' if steps != 1 else ''}")
    if shown:
        chart = build.incidents_chart(shown)
        st.vega_lite_chart(chart.data, chart.spec, width="stretch", key="c_incidents")
    st.dataframe(build.incidents_table(shown), hide_index=True, width="stretch",
                 key="t_incidents")
    opened = [i.id for i in shown if i.severity == "strong"][:OPEN_STRONG]
    for incident in shown[:MAX_INCIDENTS]:
        _incident(view, incident, incident.id in opened)
    if len(shown) > MAX_INCIDENTS:
        st.caption(f"{len(shown) - MAX_INCIDENTS} more incidents are in the table above.")


def _none_fired(steps: int, history: int) -> None:
    """No incident: on a run too short to judge, that is no news (the review's S10)."""
    if steps <= history:
        st.info(f"No alerts yet: a rule compares a step with at least {history} steps "
                f"before it, and this run has {steps}.")
    else:
        st.success("No alerts: no rule fired on any step.")


def _incident(view: View, incident: Incident, opened: bool) -> None:
    span = (f"step {incident.start}" if incident.start == incident.end
            else f"steps {incident.start}–{incident.end}, peak {incident.peak}")
    with st.expander(f"{incident.severity} · {incident.rule} · {span}",
                     expanded=opened):
        peak = build.target(incident.peak_alert, view.options.kl_estimator,
                            view.run.column_names)
        key = f"t_inc_{incident.id}"
        table = build.steps_table(incident.alerts)
        event = st.dataframe(table, key=key, on_select="rerun", selection_mode="single-row",
                             hide_index=True, width="stretch")
        if st.button(f"Open {peak.label}", key=f"b_{key}"):
            _open(view, peak)
        picked = (event or {}).get("selection", {}).get("rows", [])
        st.caption("Select a step to open its samples, sorted to show the evidence.")
        if state.fresh(key, tuple(picked)) and picked:
            alert = incident.alerts[picked[0]]
            _open(view, build.target(alert, view.options.kl_estimator, view.run.column_names))


def _open(view: View, target: build.Target) -> None:
    params = dict(target.params)
    if params["step"] not in view.run.steps:
        if target.route != "health":  # the Health panels need no samples of the step
            st.warning(f"Step {params['step']} has no samples in the dump.")
            return
        del params["step"]
    state.go(target.route, **params)
