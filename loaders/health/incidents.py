"""Consecutive hits of one rule are one incident, not a run of repeats.

A divergence at step 60 can hold the KL above its trend until step 69: that is one
incident, with a start, a peak (the step furthest past its trend) and an end. Hits of the
same rule (and key, e.g. the same rank) at most `max_gap` quiet steps apart join.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from loaders.health.alerts import STRONG, WEAK, Alert


@dataclass(frozen=True)
class Incident:
    id: str  # "rule@start" (with the key, e.g. "rank_imbalance@12/rank 3")
    rule: str
    severity: str  # the strongest of its alerts
    start: int
    peak: int
    end: int
    alerts: tuple[Alert, ...]

    @property
    def peak_alert(self) -> Alert:
        return next(a for a in self.alerts if a.step == self.peak)


def into_incidents(alerts: list[Alert], max_gap: int = 1) -> list[Alert]:
    """The alerts with their incident's id and start step filled in."""
    out: list[Alert] = []
    for _, run in _runs(alerts, max_gap):
        start = run[0].step
        name = f"{run[0].rule}@{start}" + (f"/{run[0].key}" if run[0].key else "")
        out += [replace(a, incident=name, incident_start=start) for a in run]
    return out


def incidents(alerts: list[Alert]) -> list[Incident]:
    """One Incident per incident id of alerts that went through into_incidents, by start."""
    by_id: dict[str, list[Alert]] = {}
    for alert in alerts:
        by_id.setdefault(alert.incident, []).append(alert)
    found = []
    for name, run in by_id.items():
        run.sort(key=lambda a: a.step)
        peak = max(run, key=lambda a: (a.severity == STRONG, a.score))
        severity = STRONG if any(a.severity == STRONG for a in run) else WEAK
        found.append(Incident(name, run[0].rule, severity, run[0].step, peak.step,
                              run[-1].step, tuple(run)))
    return sorted(found, key=lambda i: (i.start, i.severity != STRONG, i.rule))


def _runs(alerts: list[Alert], max_gap: int) -> list[tuple[tuple[str, str], list[Alert]]]:
    by_rule: dict[tuple[str, str], list[Alert]] = {}
    for alert in sorted(alerts, key=lambda a: a.step):
        by_rule.setdefault((alert.rule, alert.key), []).append(alert)
    runs = []
    for key, hits in by_rule.items():
        current = [hits[0]]
        for alert in hits[1:]:
            if alert.step - current[-1].step > max_gap + 1:
                runs.append((key, current))
                current = []
            current.append(alert)
        runs.append((key, current))
    return runs
