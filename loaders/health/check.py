"""Everything the Health and Alerts views need for one run, computed once."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from loaders.health.config import CONFIG_NAME, load_config
from loaders.health.rules import Alert, evaluate
from loaders.health.signals import health_signals
from loaders.metrics import MetricFrame, load_metrics


@dataclass
class Health:
    metrics: MetricFrame
    signals: pd.DataFrame  # one row per step (schema H_* columns)
    alerts: list[Alert]
    config: dict


def check(run_dir: Path, samples: pd.DataFrame | None, metrics_path: Path | None = None,
          config_path: Path | None = None, metric_files: dict[Path, str] | None = None
          ) -> Health:
    """Metrics from the run dir (and metrics_path), signals, and the alerts they raise.

    A problem with the thresholds file is a note beside the metrics' own (the pages show
    them), never an error: the defaults stand in for what could not be used."""
    roots = [run_dir] + ([metrics_path] if metrics_path else [])
    metrics = load_metrics(*roots, files=metric_files)
    # the run dir's own alerts.toml may not lead out of it; a path given explicitly may
    within = None if config_path else run_dir
    config = load_config(config_path or run_dir / CONFIG_NAME, metrics.notes, within)
    signals = health_signals(metrics.frame, samples)
    return Health(metrics, signals, evaluate(signals, samples, config), config)
