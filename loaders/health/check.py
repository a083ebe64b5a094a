"""Everything the Health and Alerts views need for one run, computed once."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from loaders.health.config import CONFIG_NAME, load_config
from loaders.health.rules import Alert, evaluated
from loaders.health.signals import dump_signals, signals_of
from loaders.health.special import trained_rank_tokens
from loaders.metrics import MetricFrame, load_metrics


@dataclass
class Health:
    metrics: MetricFrame
    signals: pd.DataFrame  # one row per step (schema H_* columns)
    alerts: list[Alert]
    config: dict


@dataclass(frozen=True)
class DumpFacts:
    """What the checks need of the dump's samples, by step: made from a frame (`of`), or a
    few steps at a time and stacked (`stacked`), since each step's are its own."""
    signals: pd.DataFrame | None  # signals.dump_signals
    ranks: tuple[pd.DataFrame, pd.DataFrame] | None  # special.trained_rank_tokens

    @classmethod
    def of(cls, samples: pd.DataFrame | None) -> DumpFacts:
        return cls(dump_signals(samples), trained_rank_tokens(samples))

    @property
    def frames(self) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """signals, rank tokens and their deviations, as frames (empty for None)."""
        signals = self.signals if self.signals is not None else pd.DataFrame()
        tokens, z = self.ranks if self.ranks is not None else (pd.DataFrame(), pd.DataFrame())
        return signals, tokens, z

    @classmethod
    def of_frames(cls, frames: tuple[pd.DataFrame, ...]) -> DumpFacts:
        """The facts `frames` holds (its inverse)."""
        signals, tokens, z = frames
        # ranks in order, as one table of the whole run has them (a chunk may lack one)
        ranks = (tokens.sort_index(axis=1), z.sort_index(axis=1))
        return cls(None if signals.empty else signals, None if tokens.empty else ranks)

    @classmethod
    def stacked(cls, parts: list[DumpFacts]) -> DumpFacts:
        signals = [p.signals for p in parts if p.signals is not None]
        ranks = [p.ranks for p in parts if p.ranks is not None]
        return cls.of_frames((pd.concat(signals) if signals else pd.DataFrame(),
                              pd.concat([r[0] for r in ranks]) if ranks else pd.DataFrame(),
                              pd.concat([r[1] for r in ranks]) if ranks else pd.DataFrame()))


def check(run_dir: Path, samples: pd.DataFrame | DumpFacts | None,
          metrics_path: Path | None = None, config_path: Path | None = None,
          metric_files: dict[Path, str] | None = None) -> Health:
    """Metrics from the run dir (and metrics_path), signals, and the alerts they raise,
    over the dump's samples (or their DumpFacts, made already).

    A problem with the thresholds file is a note beside the metrics' own (the pages show
    them), never an error: the defaults stand in for what could not be used."""
    roots = [run_dir] + ([metrics_path] if metrics_path else [])
    metrics = load_metrics(*roots, files=metric_files)
    # the run dir's own alerts.toml may not lead out of it; a path given explicitly may
    within = None if config_path else run_dir
    config = load_config(config_path or run_dir / CONFIG_NAME, metrics.notes, within)
    facts = samples if isinstance(samples, DumpFacts) else DumpFacts.of(samples)
    signals = signals_of(metrics.frame, facts.signals)
    return Health(metrics, signals, evaluated(signals, facts.ranks, config), config)
