"""Following a live run: a poll that stats the files a loaded run knows, and nothing else.

A trainer appends to its dump for days while someone watches.  Each poll stats the run's
known files (dump files, metric logs, alerts.toml); only when a stat changed is the run
brought up to date (Catalog.follow: the grown bytes are parsed, a file replaced or rewritten
under the board is checked by content and read again).  The dir is walked for new files at
most every `walk_every` seconds, or when a caller asks.  Every session following the same run
shares one Follower, so N open tabs stat the files once per interval, not N times.  A growing
run's index is written at most every `save_every` seconds (a save rewrites all of it).
"""
from __future__ import annotations

import math
import os
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path

from loaders.index import ondisk
from loaders.index.group_stat import joined_stat
from loaders.index.ondisk import FileState
from loaders.serve.catalog import Catalog
from loaders.serve.grow import saved
from loaders.serve.run import Run
from loaders.serve.run_health import metric_stamp

WALK_SECONDS = 30.0  # the dir is walked for new files at most this often
SAVE_SECONDS = 30.0  # a growing run's index is written at most this often
Stamp = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode


@dataclass(frozen=True)
class Beat:
    """What one poll found."""
    run: Run  # the run as it is now (the same object when nothing changed)
    last_write_ns: int  # the newest mtime among the run's files, 0 when none could be stat'ed
    walked: bool  # this poll walked the dir for new files


def _stamp(stat: os.stat_result) -> Stamp:
    return stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino


def _indexed(state: FileState) -> Stamp:
    return state.size, state.mtime_ns, state.ctime_ns, state.inode


class Follower:
    """Polls one run of a catalog; thread-safe, shared by every session that follows it."""

    def __init__(self, catalog: Catalog, path: Path, walk_every: float = WALK_SECONDS,
                 min_gap: float = 0.0, save_every: float = SAVE_SECONDS) -> None:
        self.catalog, self.path = catalog, Path(path)
        self.walk_every, self.min_gap, self.save_every = walk_every, min_gap, save_every
        self._lock = threading.Lock()
        self._walked_at = time.monotonic()  # the run was loaded from a walk just made
        self._polled_at = -math.inf
        self._saved_at = -math.inf  # when this follower last wrote the index
        self._unsaved: Run | None = None  # a grown run whose index is not on disk yet
        self._confirmed: dict[str, Stamp] = {}  # stats a content check vouched for
        self._last: Beat | None = None
        self._dir_id = _dir_id(self.path)  # the dir the run was loaded from, as found now

    def leads_here(self, named: Path) -> bool:
        """named, the run dir as the user named it (through links, maybe), still is the dir
        this follower polls: one stat.  A link swapped to another run makes it False, so the
        page opens that run on this tick instead of on the next Refresh."""
        found = _dir_id(named)
        return found is not None and found == self._dir_id

    def poll(self, walk: bool = False) -> Beat:
        """The run now: stats only when nothing changed and no walk is due.  Polls closer
        together than min_gap (other sessions' timers) share the last one's answer."""
        with self._lock:
            now = time.monotonic()
            if not walk and self._last is not None and now - self._polled_at < self.min_gap:
                return self._last
            run = self.catalog.run(self.path)
            due = walk or now - self._walked_at >= self.walk_every
            stamps = _stat_all(run)
            if due or self._changed(run, stamps):
                run, stamps = self._grown(run, due, now)
            if self._unsaved is not None:
                self._save_pending(run, now)
            self._polled_at = now
            self._last = Beat(run, max((s[1] for s in stamps.values() if s), default=0), due)
            return self._last

    def _grown(self, run: Run, due: bool, now: float) -> tuple[Run, dict[str, Stamp | None]]:
        """The run brought up to date (a walk first when due); the index saved at most every
        save_every seconds, since a save rewrites all of it however little grew."""
        checked_ns = time.time_ns()
        save = now - self._saved_at >= self.save_every
        grown = self.catalog.follow(self.path, walk=due, save=save)
        if grown is not run:
            self._saved_at = now if save else self._saved_at
            self._unsaved = None if save else grown
        stamps = _stat_all(grown)
        self._confirm(grown, stamps, checked_ns)
        self._walked_at = now if due else self._walked_at
        return grown, stamps

    def _save_pending(self, run: Run, now: float) -> None:
        """Write the last growth's index once save_every has passed (things went quiet);
        forget it when the run was replaced meanwhile (a Refresh saves its own)."""
        if self._unsaved is not run:
            self._unsaved = None
        elif now - self._saved_at >= self.save_every:
            saved(run)
            self._saved_at, self._unsaved = now, None

    def last(self) -> Beat | None:
        """What the last poll found (None before the first); no disk access, and no wait
        for a poll in progress (one attribute read is atomic)."""
        return self._last

    def _changed(self, run: Run, stamps: dict[str, Stamp | None]) -> bool:
        """A known file's stat moved (or it went), or one indexed too soon after a write to
        trust its stat was not vouched for since, or a metric log or alerts.toml changed."""
        for rel, state in run.files.items():
            stamp = stamps.get(rel)
            if stamp != _indexed(state):
                return True
            if state.racy and self._confirmed.get(rel) != stamp:
                return True
        return metric_stamp(run.root, run.metric_files) != run.metric_stamp

    def _confirm(self, run: Run, stamps: dict[str, Stamp | None], checked_ns: int) -> None:
        """After a refresh began at checked_ns: a file's stat then, unchanged now and older
        than the racy window at that time, was checked by content and stays trustworthy (a
        later write lands in a later clock tick and moves the stat)."""
        for rel, stamp in stamps.items():
            state = run.files.get(rel)
            if (state is not None and stamp == _indexed(state)
                    and max(stamp[1], stamp[2]) + ondisk.RACY_NS < checked_ns):
                self._confirmed[rel] = stamp


def _dir_id(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _stat_all(run: Run) -> dict[str, Stamp | None]:
    """One os.stat per known file (None for one that cannot be stat'ed)."""
    stamps: dict[str, Stamp | None] = {}
    for rel in run.files:
        try:
            path = run.root / rel
            stamps[rel] = _stamp(joined_stat(path, rel, os.stat(path)))
        except OSError:
            stamps[rel] = None
    return stamps


_FOLLOWERS: weakref.WeakKeyDictionary[Catalog, dict[Path, Follower]] = (
    weakref.WeakKeyDictionary())
_REGISTRY_LOCK = threading.Lock()


def follower(catalog: Catalog, path: Path, min_gap: float = 0.0) -> Follower:
    """The one Follower of path in catalog (made on first use)."""
    key = Path(os.path.abspath(path))
    with _REGISTRY_LOCK:
        by_path = _FOLLOWERS.setdefault(catalog, {})
        if key not in by_path:
            by_path[key] = Follower(catalog, key, min_gap=min_gap)
        return by_path[key]
