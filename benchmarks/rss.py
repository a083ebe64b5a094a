"""Peak resident memory of a process and all its children, sampled from /proc."""
from __future__ import annotations

import os
import threading
import time


def _children(pid: int) -> list[int]:
    kids = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                kids += [int(c) for c in handle.read().split()]
    except OSError:
        pass
    return kids


def tree_rss(pid: int) -> int:
    """Current RSS in bytes of pid and its descendants."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            with open(f"/proc/{current}/statm") as handle:
                total += int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            continue
        todo += _children(current)
    return total


class PeakRss:
    """Context manager sampling tree_rss(pid) every `interval` seconds; .peak in bytes."""

    def __init__(self, pid: int | None = None, interval: float = 0.02) -> None:
        self.pid = pid or os.getpid()
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss(self.pid))
            time.sleep(self.interval)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, tree_rss(self.pid))
