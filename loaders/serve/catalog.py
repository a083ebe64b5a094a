"""One dump dir, walked once: its sub-runs and the runs loaded from it, until refresh().

The board asks for the sub-run list, the run and its health on every widget click; on a
network file system with thousands of files a walk (or a stat of every file) costs seconds,
so here they are dictionary lookups and the disk is only looked at again on refresh().
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from loaders.find.walk import Listing, scan, sub_runs
from loaders.index.chunk import Progress
from loaders.serve.memo import Memo
from loaders.serve.run import DumpError, Run, open_run

KEEP_RUNS = 4  # loaded runs kept per dump dir; the least recently used beyond are dropped


@dataclass(frozen=True)
class _Walk:
    listing: Listing
    sub_runs: tuple[str, ...]


class Catalog:
    """The sub-runs of a dump dir and its loaded runs, shared by every session.

    A failed load (DumpError) is remembered too, so a bad dir is not walked on every click.
    """

    def __init__(self, base: str | Path, keep: int = KEEP_RUNS) -> None:
        self.base = Path(base).expanduser().resolve()
        self._walk_lock = threading.Lock()  # one walk at a time, for this dir only
        self._walk: _Walk | None = None
        self._runs: Memo[Path, Run | DumpError] = Memo(size=keep)

    def _current(self) -> _Walk:
        with self._walk_lock:
            if self._walk is None:
                self._walk = _walked(self.base)
            return self._walk

    def sub_runs(self) -> list[str]:
        """Dirs under the base (the base itself as '.') that directly hold dump files."""
        return list(self._current().sub_runs)

    def run(self, path: str | Path, progress: Progress | None = None) -> Run:
        """The run of path (the base or a dir under it), loaded on first use; DumpError when
        it cannot be.  `progress` only reports when this call is the one that loads."""
        # abspath, not resolve: resolving costs a stat per path component on every click
        key = Path(os.path.abspath(Path(path).expanduser()))
        found = self._runs.get(key, lambda: self._open(key, self._current(), progress))
        if isinstance(found, DumpError):
            raise found
        return found

    def loaded(self) -> list[Path]:
        """The dirs whose runs (or load errors) are held now."""
        return self._runs.computed()

    def refresh(self, progress: Progress | None = None) -> None:
        """Walk the dir again and bring every loaded run up to date through its on-disk
        index (only what changed is parsed); a run that did not change stays as it was,
        with its caches.  Sessions keep reading the previous runs until each is replaced."""
        walk = _walked(self.base)
        with self._walk_lock:
            self._walk = walk
        for key in self._runs.computed():
            self._runs.recompute(key, lambda k=key: self._reopen(k, walk, progress))

    def _reopen(self, path: Path, walk: _Walk, progress: Progress | None) -> Run | DumpError:
        old = self._runs.peek(path)
        new = self._open(path, walk, progress)
        if isinstance(old, Run) and isinstance(new, Run) and old.unchanged(new):
            return old
        return new

    def _open(self, path: Path, walk: _Walk, progress: Progress | None) -> Run | DumpError:
        try:
            listing = _listing_of(path.resolve(), walk.listing)
            return open_run(path, progress=progress, listing=listing)
        except DumpError as err:
            return err


def _walked(base: Path) -> _Walk:
    listing = scan(base) if base.is_dir() else Listing(base, (), ())
    return _Walk(listing, tuple(sub_runs(listing)))


def _listing_of(path: Path, listing: Listing) -> Listing | None:
    """The part of the base's walk under path; None (walk path itself) when it is not part
    of that walk: outside the base, or inside a hidden dir the walk skipped."""
    if path == listing.root:
        return listing
    if listing.root not in path.parents:
        return None
    rel = path.relative_to(listing.root).as_posix()
    if any(part.startswith(".") for part in rel.split("/")):
        return None
    return listing.under(rel)
