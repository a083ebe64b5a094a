"""A run's metric files, found once, and its health computed from them without a walk."""
from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pandas as pd

from loaders.find.remote import is_url
from loaders.health.check import DumpFacts, Health, check
from loaders.health.config import CONFIG_NAME
from loaders.index.ondisk import FileState
from loaders.index.refresh import METRICS
from loaders.metrics.collect import find_metric_files, known_metric_files, metrics_fingerprint


@dataclass(frozen=True)
class MetricWalk:
    """The metric files of an extra metrics path, from one walk, with their stat stamp."""
    files: dict[Path, str]
    stamp: str


def run_metric_files(root: Path, logs: Iterable[Path], states: dict[str, FileState]
                     ) -> dict[Path, str]:
    """The run dir's metric files: logs from the walk that found the dumps, plus the .jsonl
    files the index classified as metrics (so nothing is walked or peeked again)."""
    jsonl = [root / rel for rel, state in states.items() if state.format == METRICS]
    return known_metric_files(logs, jsonl)


def metric_stamp(root: Path, files: dict[Path, str]) -> str:
    """Sizes and mtimes of the metric files and alerts.toml: what a refresh compares."""
    if is_url(root):  # neither is read from object storage
        return metrics_fingerprint(files)
    return metrics_fingerprint({**files, root / CONFIG_NAME: "config"})


def walk_metrics(path: Path, exclude: frozenset[Path]) -> MetricWalk:
    """Walk an extra metrics path (a file or dir) once; `exclude` are the run's dumps."""
    files = find_metric_files(path, exclude=exclude)
    return MetricWalk(files, metrics_fingerprint(files))


def checked_health(root: Path, samples: pd.DataFrame | DumpFacts, extra: Path | None,
                   files: dict[Path, str]) -> Health:
    """Metrics, signals and alerts; what alerts.toml could not set is a note in
    health.metrics.notes, and the defaults stand in for it."""
    if is_url(root):  # alerts.toml and metric logs on object storage are not read: the
        # default thresholds apply (a dir under /dev/null holds no alerts.toml)
        return check(Path(os.devnull), samples, extra, metric_files=files)
    return check(root, samples, extra, metric_files=files)


class HealthSource(Protocol):
    """What run_health asks of a run (loaders.serve.run.Run)."""
    root: Path
    metric_files: dict[Path, str]

    def dump_facts(self) -> DumpFacts: ...

    def walk(self, metrics_path: str) -> MetricWalk: ...


def run_health(run: HealthSource, metrics_path: str | None) -> Health:
    """A run's metrics (its own metric files, and an extra metrics path's, walked once),
    signals and alerts."""
    if not metrics_path:
        return checked_health(run.root, run.dump_facts(), None, run.metric_files)
    extra = run.walk(metrics_path)
    return checked_health(run.root, run.dump_facts(), Path(metrics_path),
                          {**run.metric_files, **extra.files})
