"""A loaded run: the data provider every page talks to."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pandas as pd

from loaders import schema as S
from loaders.discovery import discover
from loaders.index import FileState, index_dir, load_index, save_index
from loaders.refresh import refresh
from loaders.sample import Location, Sample, read_samples
from loaders.scanner import Progress
from loaders.steps import step_stats


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
    _sample_cache: dict = field(default_factory=dict, repr=False)
    _text_cache: dict = field(default_factory=dict, repr=False)

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
    def fingerprint(self) -> str:
        """Changes whenever any file's parsed state changes; a cache key for the UI."""
        return "|".join(f"{f.rel}:{f.size}:{f.mtime_ns}" for f in self.files.values())

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

    def sample(self, file: str, line: int) -> Sample:
        """One sample in full (text and token arrays), read from disk on demand."""
        return self.load_samples([(file, line)])[0]

    def step_samples(self, step: int) -> list[Sample]:
        """Every sample of one step in full, in summary order."""
        rows = self.step_rows(step)
        return self.load_samples(list(zip(rows[S.FILE], rows[S.LINE])))

    def step_texts(self, step: int) -> dict[tuple[str, int], dict[str, str]]:
        """Full prompt/response/ref_response/ground_truth of one step's samples, by key.

        Cached for the last few steps: text search re-reads them on every keystroke.
        """
        if step not in self._text_cache:
            rows = self.step_rows(step)
            keys = zip(rows[S.FILE].tolist(), rows[S.LINE].tolist())
            found = read_samples(self.root, [self._locations[k] for k in keys], texts_only=True)
            self._text_cache[step] = {key: s.texts for key, s in found.items()}
            while len(self._text_cache) > 8:
                self._text_cache.pop(next(iter(self._text_cache)))
        return self._text_cache[step]

    def load_samples(self, keys: list[tuple[str, int]]) -> list[Sample]:
        """Samples by (file, line), read in file order with a small in-memory LRU."""
        missing = [k for k in keys if k not in self._sample_cache]
        if missing:
            self._remember(read_samples(self.root, [self._locations[k] for k in missing]))
        return [self._sample_cache[k] for k in keys]

    @cached_property
    def _locations(self) -> dict[tuple[str, int], Location]:
        columns = [self.samples[c].tolist() for c in (S.FILE, S.LINE, S.OFFSET, S.NBYTES, S.STEP)]
        return {(loc[0], loc[1]): Location(*loc) for loc in zip(*columns)}

    def _remember(self, found: dict) -> None:
        self._sample_cache.update(found)
        while len(self._sample_cache) > 2048:
            self._sample_cache.pop(next(iter(self._sample_cache)))


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
    index_path = None
    if use_cache and status != "hit":
        index_path = save_index(root, fresh)
    elif use_cache:
        index_path = index_dir(root) / "index.parquet"
    return Run(root, fresh.frame, fresh.files, fresh.problems, status,
               time.perf_counter() - started, index_path)



def dump_fingerprint(root: str | Path) -> str:
    """Cheap identity of a dump dir's current contents (paths, sizes, mtimes), for UI caches."""
    root = Path(root).expanduser().resolve()
    parts = []
    for dump in discover(root):
        try:
            stat = dump.path.stat()
        except OSError:
            continue
        parts.append(f"{dump.rel}:{stat.st_size}:{stat.st_mtime_ns}")
    return "|".join(parts)
