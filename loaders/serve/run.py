"""A loaded run: the data provider every page talks to."""
from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

import pandas as pd

from loaders import schema as S
from loaders.formats import BY_NAME
from loaders.formats.notes import run_notes
from loaders.health.check import DumpFacts, Health
from loaders.health.signals import HEALTH_COLUMNS
from loaders.index.derived import DerivedTables

# raised by a read by row; the pages catch it from here (they import no index module)
from loaders.index.file_previews import IndexWrittenOver as IndexWrittenOver
from loaders.index.index_columns import IndexColumns
from loaders.index.numbers import Condition, Numbers, stacked
from loaders.index.ondisk import FileState
from loaders.index.previews import Previews, with_texts
from loaders.index.stale_marks import mark_stale
from loaders.index.steps import STEP_STATS_COLUMNS, step_stats
from loaders.serve.cache import SampleStore, StaleFiles, Texts
from loaders.serve.carried import Carried, Tables
from loaders.serve.groups import Groups
from loaders.serve.memo import Memo
from loaders.serve.read_around import (
    READ_AROUND_COLUMNS,
    pending_lines,
    read_around_count,
    samples_read_around,
)
from loaders.serve.run_health import (
    MetricWalk,
    run_health,
    walk_metrics,
)
from loaders.serve.sample import Sample
from loaders.serve.token_summary import Digest, digests

T = TypeVar("T")


@dataclass(eq=False)
class Run:
    """A snapshot of a dump dir as it was when opened.  Every session shares it, so its
    lazily computed values (step stats, sample store, health, parts) live in a thread-safe
    Memo; what changed on disk since is only seen by opening it again (Catalog.refresh)."""

    root: Path
    # one row per sample, sorted by (step, rank, file, line), read by column or by step
    # (loaders.index.numbers); its text previews are read per shown row (step_rows,
    # with_previews) from `previews`, by S.ROW
    numbers: Numbers
    files: dict[str, FileState]
    problems: list[dict]  # {file, line, reason, dropped}, capped per file
    cache: str  # "miss", "hit" or "partial"
    seconds: float
    index_path: Path | None = None
    metric_files: dict[Path, str] = field(default_factory=dict, repr=False)  # found at open
    metric_stamp: str = field(default="", repr=False)  # their stats (and alerts.toml's) then
    # walks of extra metrics paths, by path: shared with the parts, which have the same dir
    _walks: Memo[str, MetricWalk] = field(default_factory=Memo, repr=False)
    # files a sample read found changed since indexing: shared with the parts, like _walks
    _stale: StaleFiles = field(default_factory=StaleFiles, repr=False)
    # samples the trainer did not train on (filtered, aborted, errored), once trained() split
    # them off: shown apart, never in a statistic
    left_out: Numbers | None = field(default=None, repr=False)
    previews: Previews | None = field(default=None, repr=False)
    # a grown run's tables taken over from the run it grew from (loaders.serve.carried)
    carried: Carried | None = field(default=None, repr=False)
    _memo: Memo[object, object] = field(default_factory=Memo, init=False, repr=False)
    # what the Problems page lists is the whole run's, also for a part cut from it (part,
    # trained): its rows (not the run: no cycle of runs for the collector) and their memo
    _whole: Numbers | None = field(default=None, repr=False)
    _around: Memo[str, object] = field(default_factory=Memo, repr=False)
    _steps: Memo[int, pd.DataFrame] = field(default_factory=lambda: Memo(size=4), init=False,
                                            repr=False)
    # what pages derive from the whole run (derived()): a few per page and parameter
    _derived: Memo[Hashable, object] = field(default_factory=lambda: Memo(size=32), init=False,
                                             repr=False)

    @property
    def bad_lines(self) -> int:
        return sum(f.bad_lines for f in self.files.values())

    @property
    def pending_bytes(self) -> int:
        return sum(f.pending_bytes for f in self.files.values())

    @property
    def samples(self) -> pd.DataFrame:
        """Every sample's numbers as one frame: what a view must not ask for (it holds the
        whole run); a view reads the columns it needs (`columns`) or a step (`step_rows`)."""
        return self._memo.get("samples", self.numbers.read)

    @property
    def size(self) -> int:
        """How many samples."""
        return self.numbers.size

    def columns(self, names: Iterable[str]) -> pd.DataFrame:
        """Every sample, only these columns (those the run has): read, not kept."""
        return self.numbers.read(names)

    @property
    def column_names(self) -> list[str]:
        return self.numbers.columns

    @property
    def nan_values(self) -> int:
        return self._memo.get("nan_values", lambda: int(
            self.columns([S.NAN_COUNT])[S.NAN_COUNT].sum()))

    @property
    def read_around(self) -> pd.DataFrame:
        """The whole run's samples kept whose values were read around (non-finite numbers,
        token lists of different lengths), each with its file, line, step and reason: read a
        chunk of the index at a time (a long run's five columns whole held 40 MB more)."""
        whole = self.numbers if self._whole is None else self._whole
        return self._around.get("read_around", lambda: pd.concat(whole.per_step(
            READ_AROUND_COLUMNS, samples_read_around), ignore_index=True))

    @property
    def read_around_count(self) -> int:
        """How many samples read_around lists (two columns read, not five)."""
        whole = self.numbers if self._whole is None else self._whole
        return self._around.get("read_around_count", lambda: sum(whole.per_step(
            (S.NAN_COUNT, S.LENGTH_MISMATCH), read_around_count)))

    @property
    def pending_lines(self) -> list[dict]:
        """Each file's half-written last line: file, line and bytes so far."""
        return pending_lines(self.files)

    @property
    def steps(self) -> list[int]:
        """The run's steps, ascending."""
        return list(self.numbers.steps)

    @property
    def step_stats(self) -> pd.DataFrame:
        """Per-step aggregates (mean, std, min, max, quantiles), indexed by step."""
        return self._memo.get("step_stats", lambda: self.kept_table("step_stats", lambda: (
            self._made("step_stats", lambda steps: (stacked(self.numbers.per_step(
                STEP_STATS_COLUMNS, step_stats, steps=steps)),)))[0]))

    def _made(self, name: str, make: Callable[[Collection[int] | None],
                                              tuple[pd.DataFrame, ...]]
              ) -> tuple[pd.DataFrame, ...]:
        """Per-step tables make(steps) over the run (steps None: every one), or only its
        changed steps on the tables of the run it grew from."""
        if self.carried is not None:
            patched = self.carried.patched(self.numbers.where, name, make)
            if patched is not None:
                return patched
        return make(None)

    def made_tables(self) -> dict[tuple[Condition, ...], Tables]:
        """The per-step tables this run and its parts have made, by the parts' conditions:
        what a run grown from this one takes over (Carried)."""
        found: dict[tuple[Condition, ...], Tables] = {}
        runs = [self]
        while runs:
            run = runs.pop()
            stats, facts = run._memo.peek("step_stats"), run._memo.peek("dump_facts")
            tables = {**({"step_stats": (stats,)} if stats is not None else {}),
                      **({"dump_facts": facts.frames} if facts is not None else {})}
            if tables:
                found.setdefault(run.numbers.where, tables)
            runs += [part for key in (("part", True), ("part", False), "trained")
                     if (part := run._memo.peek(key)) is not None]
        return found

    def kept_table(self, name: str, make: Callable[[], pd.DataFrame]) -> pd.DataFrame:
        """A table made over every sample (of this part of the run), kept beside the run's
        index file once made (loaders.index.derived); made each time without one."""
        return self.kept_tables((name,), lambda: (make(),))[0]

    def kept_tables(self, names: tuple[str, ...], make: Callable[[], tuple[pd.DataFrame, ...]]
                    ) -> tuple[pd.DataFrame, ...]:
        file = self.numbers.file
        # the file read, wherever it is; none for a grown run's (its rows are not the file's)
        place = file.file.path if isinstance(file, IndexColumns) else None
        if file is None or place is None:
            return make()
        part = "".join(f"-{column}={int(value)}" for column, value in self.numbers.where)
        tables = DerivedTables(place, file.file.version)
        return tables.get_all(tuple(name + part for name in names), make)

    def step_rows(self, step: int) -> pd.DataFrame:
        """The summary rows of one step, with their text previews."""
        return self._steps.get(step, lambda: self.with_previews(self.numbers.step(step)))

    def with_previews(self, rows: pd.DataFrame, columns: tuple[str, ...] = S.READ_BY_ROW,
                      keys: bool = True) -> pd.DataFrame:
        """rows (of samples or left_out) with these READ_BY_ROW columns, read for these
        rows, and (keys) their keys."""
        if self.previews is None:
            return rows
        return with_texts(rows, self.previews, columns, keys)

    def derived(self, key: Hashable, make: Callable[[], T]) -> T:
        """A table a page derives from the whole run (a pure builder over `samples`, named
        by `key` with its parameters): made once for the run, not on every rerun."""
        return self._derived.get(key, make)

    def derived_table(self, name: str, make: Callable[[], pd.DataFrame]) -> pd.DataFrame:
        """A table a page derives from every sample: made once for the run, and kept beside
        its index file (kept_table) for the next time the run is opened."""
        return self._derived.get(("kept", name), lambda: self.kept_table(name, make))

    def token_digests(self) -> list[Digest]:
        """The token digests of the run's samples (one per file and step), read once."""
        def read() -> list[Digest]:
            rows = self.columns([S.ROW, S.STEP, S.FILE])
            return digests(self.with_previews(rows, (S.TOKEN_DIGEST,), keys=False))
        return self._memo.get("token_digests", read)

    def sample(self, key: str) -> Sample:
        """One sample in full (text and token arrays), read from disk on demand."""
        return self.store.load([key])[0]

    def step_samples(self, step: int) -> list[Sample]:
        """Every sample of one step in full, in summary order."""
        return self.store.load(self.step_rows(step)[S.KEY].tolist())

    def step_texts(self, step: int) -> Texts:
        """Full prompt/response/ref_response/ground_truth of one step's samples, by key;
        the samples of files changed since indexing are left out and named in `.stale`."""
        return self.store.texts(step, self.step_rows(step)[S.KEY].tolist())

    def texts(self, keys: list[str]) -> Texts:
        """Full texts of a few samples by key (files changed since indexing named in
        `.stale`, their samples left out)."""
        return self.store.texts_of(keys)

    @property
    def formats(self) -> dict[str, str]:
        """The detected format of each file ("unknown" for files that were skipped)."""
        return {rel: state.format for rel, state in self.files.items()}

    @property
    def notes(self) -> list[str]:
        """What the run holds twice with no key to join it, or leaves out
        (loaders.formats.notes)."""
        return run_notes(self.formats)

    @property
    def store(self) -> SampleStore:
        return self._memo.get("store", self._new_store)

    def _new_store(self) -> SampleStore:
        if self.index_path is not None:  # a stale read is remembered beside the index
            self._stale.on_new = self._mark_stale
        return SampleStore(self.root, self._all_samples(), self.formats, self._stale,
                           self.previews)

    def _mark_stale(self, files: set[str]) -> None:
        mark_stale(self.root, {rel: self.files[rel].checked_ns for rel in files
                               if rel in self.files})

    def _all_samples(self) -> pd.DataFrame:
        """Where every sample (trained or left out) is: the columns of a Location only."""
        names = (S.FILE, S.LINE, S.ITEM, S.STEP, S.ROW, *S.LINE_PLACE)
        parts = [n.read(names) for n in (self.numbers, self.left_out) if n is not None]
        return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]

    def groups(self, group_key: str | None = None) -> Groups:
        """GRPO groups and prompt history; `group_key` names a key to group by instead."""
        return self._memo.get(("groups", group_key), lambda: Groups(
            self.numbers, self.left_out, group_key, self.with_previews, self.kept_tables))

    @property
    def stale_files(self) -> frozenset[str]:
        """Files whose bytes a sample read found changed since this run indexed them: open
        the run again with them re-parsed (Catalog.reparse) to read them."""
        return self._stale.files()

    @property
    def has_validation(self) -> bool:
        return self._memo.get("has_validation", lambda: bool(
            self.columns([S.VALIDATION])[S.VALIDATION].any()))

    def health(self, metrics_path: str | None = None) -> Health:
        """Training metrics (run dir, plus metrics_path), health signals and alerts.

        Computed once per metrics_path from the metric files found when the run was opened
        (an extra metrics_path is walked once); no walk or stat per call.
        """
        return self._memo.get(("health", metrics_path), lambda: run_health(self, metrics_path))

    def dump_facts(self) -> DumpFacts:
        """What the health checks need of the samples, made a few steps at a time, once."""
        def make(steps: Collection[int] | None) -> tuple[pd.DataFrame, ...]:
            return DumpFacts.stacked(self.numbers.per_step(HEALTH_COLUMNS, DumpFacts.of,
                                                           steps=steps)).frames
        return self._memo.get("dump_facts", lambda: DumpFacts.of_frames(self.kept_tables(
            ("health_signals", "rank_tokens", "rank_z"), lambda: self._made("dump_facts", make))))

    def dumps(self) -> frozenset[Path]:
        """The run's dump files (not its metric logs nor skipped files)."""
        return frozenset(self.root / rel for rel, state in self.files.items()
                         if state.format in BY_NAME)

    def walk(self, metrics_path: str) -> MetricWalk:
        """The walk of an extra metrics path, made once (shared with the run's parts)."""
        return self._walks.get(metrics_path, lambda: walk_metrics(Path(metrics_path),
                                                                   self.dumps()))

    def part(self, validation: bool) -> Run:
        """The training (or validation) samples only, as a run of their own."""
        return self._memo.get(("part", validation), lambda: self._cut(
            self._part((S.VALIDATION, validation))))

    def trained(self) -> Run:
        """The samples the trainer trained on, as a run; the rest go to `left_out`."""
        def make() -> Run:
            numbers = self._part((S.EXCLUDED, False))
            left_out = self.numbers.part((S.EXCLUDED, True))
            return self._cut(numbers, left_out=None if numbers is self.numbers else left_out)
        return self._memo.get("trained", make)

    def _cut(self, numbers: Numbers, **more: Numbers | None) -> Run:
        """A run of some of these rows, sharing this run's walks, stale files and what the
        Problems page lists (the whole run's); `more`: other fields it has of its own."""
        return replace(self, numbers=numbers, _walks=self._walks, _stale=self._stale,
                       _whole=self.numbers if self._whole is None else self._whole,
                       _around=self._around, **more)

    def _part(self, condition: tuple[str, bool]) -> Numbers:
        """numbers with only the rows that meet condition; numbers itself when every row
        does (a run with no validation or left-out sample: no filter per read)."""
        column, value = condition
        every = self._memo.get(("every", condition), lambda: bool(
            (self.columns([column])[column].to_numpy(dtype=bool) == value).all()))
        return self.numbers if every else self.numbers.part(condition)

    def unchanged(self, newer: Run) -> bool:
        """True when newer, the same dir opened again, saw no change at all (dumps, metric
        files, alerts.toml, extra metrics paths): this run and its caches can stay."""
        if newer.cache != "hit" or newer.files != self.files:
            return False
        if (newer.metric_files, newer.metric_stamp) != (self.metric_files, self.metric_stamp):
            return False
        dumps = self.dumps()
        return all(walk_metrics(Path(path), dumps) == self._walks.peek(path)
                   for path in self._walks.computed())
