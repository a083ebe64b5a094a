"""A loaded run: the data provider every page talks to."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import pandas as pd

from loaders import schema as S
from loaders.find.walk import discover, stat_fingerprint
from loaders.formats import BY_NAME, supported
from loaders.health.check import Health, check
from loaders.health.config import CONFIG_NAME
from loaders.index.chunk import Progress
from loaders.index.ondisk import FileState, index_dir, load_index, save_index
from loaders.index.refresh import refresh
from loaders.index.steps import step_stats
from loaders.metrics.collect import find_metric_files, metrics_fingerprint
from loaders.serve.cache import SampleStore
from loaders.serve.sample import Sample


class DumpError(Exception):
    """The dir cannot be opened as a dump; the message is one line for the user."""


@dataclass
class Run:
    root: Path
    samples: pd.DataFrame  # one row per sample, sorted by (step, rank, file, line)
    files: dict[str, FileState]
    problems: list[dict]  # {file, line, reason, dropped}, capped per file
    cache: str  # "miss", "hit" or "partial"
    seconds: float
    index_path: Path | None = None
    _parts: dict = field(default_factory=dict, repr=False)
    _health: dict = field(default_factory=dict, repr=False)

    @property
    def bad_lines(self) -> int:
        return sum(f.bad_lines for f in self.files.values())

    @property
    def pending_bytes(self) -> int:
        return sum(f.pending_bytes for f in self.files.values())

    @property
    def nan_values(self) -> int:
        return int(self.samples[S.NAN_COUNT].sum())

    @property
    def steps(self) -> list[int]:
        return sorted(self.samples[S.STEP].unique().tolist())

    @cached_property
    def step_stats(self) -> pd.DataFrame:
        """Per-step aggregates (mean, std, min, max, quantiles), indexed by step."""
        return step_stats(self.samples)

    def step_rows(self, step: int) -> pd.DataFrame:
        """The summary rows of one step."""
        return self.samples[self.samples[S.STEP] == step]

    def sample(self, key: str) -> Sample:
        """One sample in full (text and token arrays), read from disk on demand."""
        return self.store.load([key])[0]

    def step_samples(self, step: int) -> list[Sample]:
        """Every sample of one step in full, in summary order."""
        return self.store.load(self.step_rows(step)[S.KEY].tolist())

    def step_texts(self, step: int) -> dict[str, dict[str, str]]:
        """Full prompt/response/ref_response/ground_truth of one step's samples, by key."""
        return self.store.texts(step, self.step_rows(step)[S.KEY].tolist())

    @property
    def formats(self) -> dict[str, str]:
        """The detected format of each file ("unknown" for files that were skipped)."""
        return {rel: state.format for rel, state in self.files.items()}

    @cached_property
    def store(self) -> SampleStore:
        return SampleStore(self.root, self.samples, self.formats)

    @property
    def has_validation(self) -> bool:
        return bool(self.samples[S.VALIDATION].any())

    def health(self, metrics_path: str | None = None) -> Health:
        """Training metrics (run dir, plus metrics_path), health signals and alerts.

        Recomputed only when a metric file changes; the dump side changes with the Run.
        """
        roots = [self.root] + ([Path(metrics_path)] if metrics_path else [])
        dumps = frozenset(self.root / rel for rel, state in self.files.items()
                          if state.format in BY_NAME)
        files = find_metric_files(*roots, exclude=dumps)
        config = self.root / CONFIG_NAME
        key = (metrics_path, metrics_fingerprint({**files, config: "config"}))
        if key not in self._health:
            self._health.clear()
            extra = Path(metrics_path) if metrics_path else None
            try:
                health = check(self.root, self.samples, extra, metric_files=files)
            except ValueError as err:  # a broken alerts.toml: say so, use the defaults
                health = check(self.root, self.samples, extra, config_path=Path(os.devnull),
                               metric_files=files)
                health.metrics.notes.append(f"{CONFIG_NAME} ignored: {err}")
            self._health[key] = health
        return self._health[key]

    def part(self, validation: bool) -> Run:
        """The training (or validation) samples only, as a run of their own."""
        if validation not in self._parts:
            keep = self.samples[S.VALIDATION] == validation
            self._parts[validation] = replace(self, samples=self.samples[keep].reset_index(
                drop=True), _parts={}, _health={})
        return self._parts[validation]


def open_run(root: str | Path, use_cache: bool = True, progress: Progress | None = None) -> Run:
    """Load a dump dir through the on-disk index, parsing only what changed."""
    started = time.perf_counter()
    root = Path(root).expanduser().resolve()
    if not root.is_dir():
        raise DumpError(f"no such directory: {root}")
    files = discover(root)
    if not files:
        raise DumpError(f"no .jsonl dump files under {root}")
    stored = load_index(root) if use_cache else None
    fresh, status = refresh(files, stored, progress)
    if all(state.format not in BY_NAME for state in fresh.files.values()):
        raise DumpError(_unknown_layout(fresh))
    index_path = None
    if use_cache and status != "hit":
        index_path = save_index(root, fresh)
    elif use_cache:
        index_path = index_dir(root) / "index.parquet"
    return Run(root, fresh.frame, fresh.files, fresh.problems, status,
               time.perf_counter() - started, index_path)

def _unknown_layout(stored: object) -> str:
    names = sorted(stored.files)
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return (f"no file is in a known dump format (found {len(names)}: {shown}); supported: "
            + "; ".join(line.strip(" -") for line in supported().splitlines()))


def dump_fingerprint(root: str | Path) -> str:
    """Cheap identity of a dump dir's current contents (paths, sizes, mtimes), for UI caches."""
    root = Path(root).expanduser().resolve()
    return stat_fingerprint((dump.rel, dump.path) for dump in discover(root))
