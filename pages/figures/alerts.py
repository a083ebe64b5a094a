"""Pure builders of the Alerts page: incidents, their steps, and where each alert leads."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from loaders import schema as S
from loaders.health.alerts import Alert
from loaders.health.incidents import Incident
from pages.figures.step_panels import Panel
from pages.figures.tables import sort_choices
from pages.figures.vega import CANVAS

ANY_COLUMN = "(any column)"  # the Responses sort choice that opens the column box
# what each rule's drill-down shows, for the page's words
COLOURS = {"strong": "#d62728", "weak": "#ff9f1c"}
SHOWN = {S.RESPONSE_LEN: "longest responses first", S.REPETITION: "most repetitive first",
         S.kl_mean(S.K3): "highest KL first", S.POLICY_LAG: "stalest first"}


@dataclass(frozen=True)
class Target:
    """Where an alert opens: a route and the view parameters that show its evidence."""
    route: str
    params: dict
    label: str


def _evidence_text(evidence: dict, limit: int = 6) -> str:
    """The values behind an alert, the signals first, as one short line."""
    shown = [f"{k}={v}" for k, v in evidence.items() if k != "signals" and v is not None]
    signals = evidence.get("signals")
    head = f"signals: {', '.join(signals)}; " if signals else ""
    return head + ", ".join(shown[:limit]) + (" …" if len(shown) > limit else "")


def incidents_table(incidents: list[Incident]) -> pd.DataFrame:
    """One row per incident: severity, rule, start/peak/end, steps hit, peak evidence."""
    return pd.DataFrame({
        "severity": [i.severity for i in incidents], "rule": [i.rule for i in incidents],
        "start": [i.start for i in incidents], "peak": [i.peak for i in incidents],
        "end": [i.end for i in incidents], "steps": [len(i.alerts) for i in incidents],
        "peak evidence": [_evidence_text(i.peak_alert.evidence) for i in incidents],
        "incident": [i.id for i in incidents]})


def steps_table(alerts: tuple[Alert, ...] | list[Alert]) -> pd.DataFrame:
    """One row per step of an incident (or any alerts): its severity and evidence."""
    return pd.DataFrame({
        "step": [a.step for a in alerts], "severity": [a.severity for a in alerts],
        "spreads": [round(a.score, 1) for a in alerts],
        "evidence": [_evidence_text(a.evidence, 12) for a in alerts]})


def target(alert: Alert, estimator: str, columns: pd.Index | list[str]) -> Target:
    """The step's samples sorted to show the alert's evidence (or its groups, filtered)."""
    drill = alert.drill
    if drill.health_panel:
        return Target("health", {"step": alert.step, "panel": drill.health_panel},
                      f"the {drill.health_panel.lower()} panel at step {alert.step}")
    if drill.group_flag:
        return Target("groups", {"step": alert.step, "gflags": [drill.group_flag]},
                      f"step {alert.step}'s zero-variance groups")
    column = drill.column
    if column.startswith("kl_") and column.endswith("_mean"):  # the KL the user reads
        column = S.kl_mean(estimator)
    if not column or column not in columns:
        return Target("responses", {"step": alert.step}, f"step {alert.step}'s samples")
    by_label = {c: label for label, c in sort_choices(estimator).items()}
    params: dict = {"step": alert.step, "desc": drill.descending}
    if column in by_label:
        params["sort"] = by_label[column]
    else:
        params.update(sort=ANY_COLUMN, col=column)
    how = SHOWN.get(drill.column, f"sorted by {column}")
    return Target("responses", params, f"step {alert.step}'s samples, {how}")


def incidents_chart(incidents: list[Incident]) -> Panel:
    """Each incident as a bar from its start to its end step on its rule's row, coloured by
    severity (Vega-Lite: the page loads no Plotly script).  Rules are the board's own
    names; an incident's id is data, shown in the hover as text."""
    data = pd.DataFrame({
        RULE: [i.rule for i in incidents], SEVERITY: [i.severity for i in incidents],
        INCIDENT: [i.id for i in incidents], FROM: [i.start - 0.5 for i in incidents],
        TO: [i.end + 0.5 for i in incidents], START: [i.start for i in incidents],
        PEAK: [i.peak for i in incidents], END: [i.end for i in incidents]})
    severities = [s for s in COLOURS if s in set(data[SEVERITY])]
    tooltip = [{"field": INCIDENT, "type": "nominal"}] + [
        {"field": f, "type": "quantitative", "format": "d"} for f in (START, PEAK, END)]
    spec = {"height": {"step": 28}, "mark": {"type": "bar", "opacity": 0.9}, **CANVAS,
            "encoding": {
                "y": {"field": RULE, "type": "nominal", "title": None, "sort": "ascending"},
                "x": {"field": FROM, "type": "quantitative", "title": S.STEP,
                      "scale": {"zero": False, "nice": False, "padding": 10},
                      "axis": {"format": "d", "tickMinStep": 1}},
                "x2": {"field": TO},
                "color": {"field": SEVERITY, "type": "nominal", "legend": {
                    "orient": "top", "title": None},
                          "scale": {"domain": severities,
                                    "range": [COLOURS[s] for s in severities]}},
                "tooltip": tooltip}}
    return Panel(data, spec)


RULE, SEVERITY, INCIDENT = "rule", "severity", "incident"
FROM, TO, START, PEAK, END = "from", "to", "start", "peak", "end"
