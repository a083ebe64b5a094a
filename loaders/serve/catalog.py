"""One dump dir, walked once: its sub-runs and the runs loaded from it, until refresh().

The board asks for the sub-run list, the run and its health on every widget click; on a
network file system with thousands of files a walk (or a stat of every file) costs seconds,
so here they are dictionary lookups and the disk is only looked at again on refresh().

The walk and every load run in a worker thread (loaders.serve.watch) that callers wait on:
a load reporting no progress for RL_BOARD_LOAD_STALL_SECONDS is given up on with a one-line
message, and no lock another session needs is held by it meanwhile.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable, Collection
from pathlib import Path

from loaders.find.remote import RemotePath, as_path, is_url
from loaders.heap import give_back
from loaders.index.chunk import Progress
from loaders.serve.budget import BUDGET, run_bytes
from loaders.serve.dir_walk import DirWalk, listing_of, walk_dir
from loaders.serve.grow import grown
from loaders.serve.memo import Memo
from loaders.serve.open_run import DumpError, open_run
from loaders.serve.run import Run
from loaders.serve.watch import Load, Stalled, stall_seconds

KEEP_RUNS = 4  # loaded runs kept per dump dir; the least recently used beyond are dropped
_WALK = "walk"  # the walk's key among the loads (runs are keyed by their Path)


class _Absent(Exception):
    """Raised from inside Memo.get: the run is not held (nothing computed, nothing waited)."""


def _absent() -> Run:
    raise _Absent


class Catalog:
    """The sub-runs of a dump dir and its loaded runs, shared by every session.

    A failed load (DumpError) is remembered too, so a bad dir is not walked on every click;
    a stalled one is not, so a later call tries again.
    """

    def __init__(self, base: str | Path, keep: int = KEEP_RUNS) -> None:
        self.base = as_path(base) if is_url(base) else Path(base).expanduser().resolve()
        self._lock = threading.Lock()  # guards _walk and _loads; never held while loading
        self._walk: DirWalk | None = None
        self._loads: dict[object, Load] = {}  # in flight, by key: joined by later callers
        self._runs: Memo[Path, Run | DumpError] = Memo(size=keep)

    def _current(self, progress: Progress | None = None) -> DirWalk:
        walk = self._walk
        if walk is None:
            walk = self._watch(_WALK, lambda report: walk_dir(self.base), progress,
                               f"walking {self.base}")
        if isinstance(walk, DumpError):
            raise walk
        return walk

    def sub_runs(self) -> list[str]:
        """Dirs under the base (the base itself as '.') that directly hold dump files."""
        try:
            return list(self._current().sub_runs)
        except DumpError:  # a stalled or failed walk: run() gives the message
            return []

    def sub_run_formats(self) -> dict[str, frozenset[str]]:
        """The dump formats of each sub-run's first files, from the one walk."""
        try:
            return dict(self._current().formats)
        except DumpError:
            return {}

    def run(self, path: str | Path, progress: Progress | None = None) -> Run:
        """The run of path (the base or a dir under it), loaded on first use; DumpError when
        it cannot be, or when its load made no progress for stall_seconds().  `progress`
        reports (in the caller's thread) while this call waits for the load."""
        key = _key(path)
        try:
            found = self._runs.get(key, _absent)
            BUDGET.touch(self, key)
        except _Absent:
            walk = self._current(progress)
            found = self._watch(key, lambda report: self._open(key, walk, report), progress,
                                f"loading {key}")
        if isinstance(found, DumpError):
            raise found
        return found

    def loaded(self) -> list[Path]:
        """The dirs whose runs (or load errors) are held now."""
        return self._runs.computed()

    def refresh(self, progress: Progress | None = None) -> None:
        """Walk the dir again and bring every loaded run up to date through its on-disk
        index (only what changed is parsed); a run that did not change stays as it was,
        with its caches.  Sessions keep reading the previous runs until each is replaced.
        DumpError (the first, after trying every run) when a reload made no progress."""
        walk = self._rewalk(progress)
        stalled: list[DumpError] = []
        for key in self._runs.computed():
            try:
                self._watch(key, lambda report, k=key: self._reopen(k, walk, report),
                            progress, f"loading {key}")
            except DumpError as err:
                stalled.append(err)
        if stalled:
            raise stalled[0]

    def follow(self, path: str | Path, walk: bool = False, save: bool = True) -> Run:
        """The held run of path with what its files gained since it was read (only the
        files it knows, unless `walk`: then the dir is walked for new ones first; the index
        on disk rewritten when `save`); a run not held yet is loaded.  See
        loaders.serve.grow; DumpError as run() raises it."""
        key = _key(path)
        held = self._runs.peek(key)
        if not isinstance(held, Run):
            return self.run(path)
        listing = listing_of(key.resolve(), self._rewalk(None).listing) if walk else None
        found = self._watch(key, lambda report: grown(held, listing, report, save), None,
                            f"following {key}")
        if isinstance(found, DumpError):
            raise found
        return found

    def _rewalk(self, progress: Progress | None) -> DirWalk:
        walk = self._watch(_WALK, lambda report: walk_dir(self.base), progress,
                           f"walking {self.base}")
        if isinstance(walk, DumpError):
            raise walk
        return walk

    def reparse(self, path: str | Path, files: Collection[str],
                progress: Progress | None = None) -> Run:
        """The run of path opened again with `files` (relative to it; a read found their
        bytes changed since indexing) parsed whole.  It replaces the run held, and so its
        cached samples; DumpError as run() raises it.  A load of path in flight (a refresh)
        is joined, not doubled: if it did not re-parse them, a read names them again."""
        key = _key(path)
        walk, stale = self._current(progress), frozenset(files)
        found = self._watch(key, lambda report: self._open(key, walk, report, stale),
                            progress, f"loading {key}")
        if isinstance(found, DumpError):
            raise found
        return found

    def _watch(self, key: object, work: Callable[[Progress], object],
               progress: Progress | None, what: str) -> object:
        """work's result for key, from a worker thread that later callers of key join;
        DumpError when it reports nothing for stall_seconds() (it keeps running alone)."""
        limit = stall_seconds()
        with self._lock:
            load = self._loads.get(key)
            if load is not None and load.quiet_for() >= limit:
                if load.given_up_for() < limit:  # given up on just now: no second wait
                    raise _stalled(what, limit)
                load = None  # long given up on: try again beside it
            if load is None:
                load = self._loads[key] = Load(work, lambda result, done: self._landed(
                    key, done, result), what)
        try:
            return load.wait(progress, limit)
        except Stalled:
            raise _stalled(what, limit) from None

    def _landed(self, key: object, load: Load, result: object) -> None:
        """Keep a finished load's result, unless a later try of the same key replaced it."""
        with self._lock:
            if self._loads.get(key) is not load:
                return
            del self._loads[key]
            if isinstance(result, DirWalk):
                self._walk = result
            elif isinstance(key, (Path, RemotePath)) and isinstance(result, (Run, DumpError)):
                self._runs.put(key, result)
        if isinstance(result, Run):  # outside the lock: the budget may drop other runs here
            BUDGET.admit(self, key, result, run_bytes(result))
            give_back()  # the load's temporaries, and the runs the budget just dropped

    def drop(self, key: object, run: object) -> None:
        """Forget the run held for key, if it is still `run` (the memory budget's call)."""
        if isinstance(key, (Path, RemotePath)) and self._runs.peek(key) is run:
            self._runs.discard(key)

    def _reopen(self, path: Path, walk: DirWalk, progress: Progress | None) -> Run | DumpError:
        old = self._runs.peek(path)
        # files a read of the held run found changed are parsed again whole, whatever
        # their stats and hashes say
        new = self._open(path, walk, progress, old.stale_files if isinstance(old, Run) else ())
        if isinstance(old, Run) and isinstance(new, Run) and old.unchanged(new):
            return old
        return new

    def _open(self, path: Path, walk: DirWalk, progress: Progress | None,
              stale: Collection[str] = ()) -> Run | DumpError:
        if walk.error:
            return DumpError(walk.error)
        try:
            listing = listing_of(path.resolve(), walk.listing)
            return open_run(path, progress=progress, listing=listing, stale=stale)
        except DumpError as err:
            return err


def _stalled(what: str, limit: float) -> DumpError:
    return DumpError(f"{what} made no progress for {limit:g} s, so the board stopped waiting "
                     f"(a hung network mount, or a file that never ends?); try again later")


def _key(path: str | Path) -> Path:
    """A run's key: its absolute path, or its URL (loaders.find.remote)."""
    if is_url(path):
        return as_path(path)
    # abspath, not resolve: resolving costs a stat per path component on every click
    return Path(os.path.abspath(Path(path).expanduser()))
