"""A load in a worker thread that callers wait on, and give up on when it stops moving.

Opening a dump can hang where no timeout reaches: a read on a dead network mount, a file
that turns out to be a FIFO.  The board serves many sessions from one process, so a caller
waits only while the load reports progress; the worker is left to finish (or hang) alone.
"""
from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Callable

from loaders.index.chunk import Progress
from loaders.serve.open_run import DumpError

STALL_ENV = "RL_BOARD_LOAD_STALL_SECONDS"
STALL_SECONDS = 120.0  # no progress report and no result for this long: given up on
log = logging.getLogger(__name__)


def stall_seconds() -> float:
    """$RL_BOARD_LOAD_STALL_SECONDS (read on every load, so a server or a test can set it)."""
    try:
        value = float(os.environ.get(STALL_ENV, STALL_SECONDS))
    except ValueError:
        return STALL_SECONDS
    return value if math.isfinite(value) and value > 0 else STALL_SECONDS


class Stalled(Exception):
    """The load reported nothing for the whole wait."""


class Load:
    """work(report) running in a daemon thread; landed(result, load) is called with its
    result (an unexpected error becomes a one-line DumpError) before waiters see it."""

    def __init__(self, work: Callable[[Progress], object],
                 landed: Callable[[object, Load], None], what: str) -> None:
        self._cond = threading.Condition()
        self._reports = 0
        self._last = (0, 0)
        self._moved = time.monotonic()
        self._given_up = -math.inf
        self._done = False
        self._result: object = None
        self.what = what
        threading.Thread(target=self._body, args=(work, landed), daemon=True,
                         name=f"rl-board {what}"[:60]).start()

    def _report(self, done: int, total: int) -> None:
        with self._cond:
            self._reports += 1
            self._last = (done, total)
            self._moved = time.monotonic()
            self._cond.notify_all()

    def _body(self, work: Callable[[Progress], object],
              landed: Callable[[object, Load], None]) -> None:
        try:
            result = work(self._report)
        except Exception as err:  # noqa: BLE001  (a bug or a race: one line, log has the rest)
            log.exception("%s failed", self.what)
            result = DumpError(f"{self.what} failed: {type(err).__name__}: {err}"
                               .splitlines()[0])
        try:
            landed(result, self)
        finally:
            with self._cond:
                self._result, self._done = result, True
                self._cond.notify_all()

    def quiet_for(self) -> float:
        """Seconds since the last progress report (or the start)."""
        with self._cond:
            return time.monotonic() - self._moved

    def given_up_for(self) -> float:
        """Seconds since a waiter last gave up on it (inf when none has)."""
        with self._cond:
            return time.monotonic() - self._given_up

    def wait(self, progress: Progress | None, limit: float) -> object:
        """The result; Stalled when `limit` seconds pass without a report or the result.
        `progress` is called in the waiting thread (Streamlit draws only from a session's)."""
        seen = 0
        while True:
            with self._cond:
                self._cond.wait_for(lambda seen=seen: self._done or self._reports != seen,
                                    limit)
                if self._done:
                    return self._result
                if self._reports == seen:
                    self._given_up = time.monotonic()
                    raise Stalled(self.what)
                seen, last = self._reports, self._last
            if progress is not None:
                progress(*last)
