"""A run followed without a browser: its alert rules evaluated as steps complete, each new
strong incident handed to the outbox once (`python -m loaders watch`, loaders/cli_watch.py).

The run is followed as the Follow toggle follows it (loaders.serve.follow): a poll stats the
files the run knows and parses only new bytes; the dir is walked for new files now and then.
The rules run when the run grew or a step completed.  A step is complete once a later step
has samples, or once the run has been quiet for `settle` seconds (a finished run's last
step); an incident is sent only from a complete step on, so a half-written step never raises
one it would not raise whole.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from loaders.health.alerts import STRONG, rounded
from loaders.health.check import check
from loaders.health.incidents import Incident, incidents
from loaders.serve.catalog import Catalog
from loaders.serve.follow import Follower
from loaders.serve.open_run import DumpError
from loaders.serve.outbox import Outbox
from loaders.serve.run import Run

SETTLE_SECONDS = 120.0
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WatchOptions:
    root: Path
    metrics: Path | None = None
    alerts_config: Path | None = None
    board_url: str = "http://localhost:8901"
    settle: float = SETTLE_SECONDS  # quiet this long: the newest step is complete


class Watch:
    """One run's follower and the incidents it has handed on."""

    def __init__(self, options: WatchOptions, outbox: Outbox) -> None:
        self.options, self.outbox = options, outbox
        self.catalog = Catalog(options.root)
        self.follower = Follower(self.catalog, options.root)
        self._checked: tuple[Run, int | None] | None = None
        self._said = ""  # the last load error logged (once, not every poll)
        # the step ranges handed on, by (rule, key): an incident's start moves as the trend
        # it is measured against learns later steps, and it is still the same incident
        self._ranges: dict[tuple[str, str], list[list[int]]] = {}
        for record in outbox.found:
            if isinstance(record.get("start"), int) and isinstance(record.get("end"), int):
                self._ranges.setdefault((str(record.get("rule")), str(record.get("key", ""))),
                                        []).append([record["start"], record["end"]])

    def tick(self, final: bool = False) -> int:
        """One poll; the rules run when the run or its last complete step moved.  `final`:
        every step counts as complete (--once).  How many new incidents were handed on."""
        try:
            beat = self.follower.poll()
        except DumpError as err:
            if str(err) != self._said:
                log.warning("watch: %s", err)
                self._said = str(err)
            return 0
        run = beat.run
        complete = self._complete_step(run, beat.last_write_ns, final)
        if self._checked == (run, complete) or complete is None:
            return 0
        self._checked = (run, complete)
        options = self.options
        health = check(run.root, run.dump_facts(), options.metrics, options.alerts_config,
                       run.metric_files)
        gap = int(health.config["incidents"]["max_gap"])
        return sum(self.outbox.add(*message(incident, run.root, options))
                   for incident in incidents(health.alerts)
                   if incident.severity == STRONG and incident.start <= complete
                   and self._new(incident, gap))

    def _new(self, incident: Incident, gap: int) -> bool:
        """Whether the incident is none handed on before: no range of its rule and key within
        `gap` steps of it (one that is grows to cover it)."""
        ranges = self._ranges.setdefault((incident.rule, incident.alerts[0].key), [])
        for known in ranges:
            if known[0] - gap <= incident.end + 1 and incident.start - 1 <= known[1] + gap:
                known[0], known[1] = min(known[0], incident.start), max(known[1], incident.end)
                return False
        ranges.append([incident.start, incident.end])
        return True

    def _complete_step(self, run: Run, last_write_ns: int, final: bool) -> int | None:
        steps = run.steps
        if not steps:
            return None
        quiet = time.time_ns() - last_write_ns >= self.options.settle * 1e9
        return steps[-1] if final or quiet else (steps[-2] if len(steps) > 1 else None)


def message(incident: Incident, root: Path, options: WatchOptions
            ) -> tuple[str, str, str, dict]:
    """(incident id, title, body, the record alerts.jsonl keeps) of one incident: its rule,
    steps, the evidence at its peak and the board's link to it."""
    peak = incident.peak_alert
    evidence = {k: rounded(v) if isinstance(v, (int, float)) else v
                for k, v in peak.evidence.items()}
    query = {"dir": str(root), "step": incident.peak}
    if options.metrics:
        query["metrics"] = str(options.metrics)
    link = f"{options.board_url.rstrip('/')}/alerts?{urlencode(query)}"
    steps = (f"step {incident.start}" if incident.start == incident.end
             else f"steps {incident.start}-{incident.end}")
    title = f"RL board: {incident.rule} ({incident.severity}) in {root.name}, {steps}"
    lines = [f"rule: {incident.rule}", f"run: {root}",
             f"{steps} (peak at step {incident.peak})",
             *(f"{name}: {value}" for name, value in evidence.items()), f"open: {link}"]
    record = {"rule": incident.rule, "key": incident.alerts[0].key,
              "severity": incident.severity, "start": incident.start, "peak": incident.peak,
              "end": incident.end, "evidence": evidence, "link": link}
    return incident.id, title, "\n".join(lines), record
