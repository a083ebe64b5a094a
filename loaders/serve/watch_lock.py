"""One watcher a run: an exclusive lock beside the run's alerts.jsonl, held while it watches.

Two watchers of one run (a cron `--once` beside a long-running watch, a second terminal)
would each find the same new incident before either wrote it down, and each send it: the
log is read once at start, and appended to without a lock.  The lock is flock(2) on
`watch.lock`: the kernel lets it go when its holder exits however it exits (a kill -9, an
OOM), so a crash never leaves a run locked.  The holder's pid is written in the file for
the message the second one gives.
"""
from __future__ import annotations

import errno
import logging
import os
from pathlib import Path
from typing import BinaryIO

LOCK_NAME = "watch.lock"
log = logging.getLogger(__name__)


class Watched(Exception):
    """Another watcher holds the run: its pid (0 when it wrote none yet)."""

    def __init__(self, pid: int) -> None:
        super().__init__(pid)
        self.pid = pid


def hold(place: Path) -> BinaryIO | None:
    """The lock of the run whose index dir is `place`, taken (keep the handle open while
    watching; closing it lets the lock go).  Raises Watched when another watcher holds it;
    None when no lock can be taken here (no flock on this system, an unwritable dir: the
    watch goes on as before, which the log says)."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        log.warning("watch: no flock here: a second watcher of this run would send twice")
        return None
    try:
        place.mkdir(parents=True, exist_ok=True)
        handle = open(place / LOCK_NAME, "a+b")  # noqa: SIM115 -- held for the watch
    except OSError as err:
        log.warning("watch: cannot lock %s: %s", place / LOCK_NAME, err.strerror or err)
        return None
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        if err.errno not in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES):  # no flock
            log.warning("watch: cannot lock %s: %s", place / LOCK_NAME, err.strerror or err)
            handle.close()  # on this file system (a Lustre, an NFS without locks)
            return None
        handle.seek(0)
        pid = handle.read(32).strip()
        handle.close()
        raise Watched(int(pid) if pid.isdigit() else 0) from None
    handle.truncate(0)
    handle.write(str(os.getpid()).encode())
    handle.flush()
    # a forked child (the index's workers) would share the lock: one killed with its parent
    # still running would keep the run locked
    os.register_at_fork(after_in_child=handle.close)
    return handle
