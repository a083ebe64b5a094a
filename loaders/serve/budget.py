"""A memory budget for the runs held in memory, across every dump dir the board has open.

Comparing runs opens several big runs at once, each in its own dir's Catalog; a count per
catalog (KEEP_RUNS) does not bound what they take together.  Every catalog reports the runs
it holds here, with their size, and uses each one it serves; beyond the budget the least
recently used are dropped from their catalogs (a session still drawing one keeps it for that
rerun; the next opens it again from its index, in well under a second).  The run used last is
never dropped, so one run larger than the budget still opens.
"""
from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable
from typing import TYPE_CHECKING, Protocol

import pandas as pd

from loaders.index.grown_columns import GrownColumns

if TYPE_CHECKING:  # the budget is imported beside runs, not by them
    from loaders.serve.run import Run

BUDGET_ENV = "RL_BOARD_RUN_MEMORY_MB"
DEFAULT_MB = 4096


class Holder(Protocol):
    def drop(self, key: Hashable, value: object) -> None:
        """Forget key's value, if it is still `value`."""


def budget_bytes() -> int:
    """$RL_BOARD_RUN_MEMORY_MB (default 4096) in bytes; a bad value is the default."""
    try:
        mb = float(os.environ.get(BUDGET_ENV, DEFAULT_MB))
    except ValueError:
        mb = DEFAULT_MB
    return int((mb if mb > 0 else DEFAULT_MB) * 2**20)


# what a run whose numbers stay in its index file keeps a sample, once every page ran: where
# each sample is (16 bytes, loaders/serve/locations.py) and the per-step and per-prompt tables
READ_RUN_BYTES = 32
# and the steps whose rows it keeps with their previews (Run.step_rows and Groups keep 4
# each), about 2 KB a sample with four 400-character previews
STEP_FRAMES_KEPT, STEP_ROW_BYTES = 8, 2048


def frame_bytes(frame: pd.DataFrame) -> int:
    """What a summary frame takes in memory, its text included."""
    return int(frame.memory_usage(deep=True, index=True).sum())


def run_bytes(run: Run) -> int:
    """A loaded run's share of the budget: the summary frame it holds (none when its
    numbers are read from its index file) twice over, since a view's part of it may copy
    its rows, and the text previews it holds in memory (none when read from the file)."""
    held = run.previews.held_bytes if run.previews is not None else 0
    frame = run.numbers.held
    if frame is None:  # what it keeps of its numbers once its pages ran (and a followed
        per_step = run.numbers.size // max(1, len(run.steps))  # run its last steps' rows)
        tail = run.numbers.file.tail if isinstance(run.numbers.file, GrownColumns) else None
        return (run.numbers.size * READ_RUN_BYTES + held
                + STEP_FRAMES_KEPT * per_step * STEP_ROW_BYTES
                + (2 * frame_bytes(tail) if tail is not None else 0))
    return 2 * frame_bytes(frame) + held


_Entry = tuple[weakref.ref, weakref.ref, int]  # holder, value, bytes


class Budget:
    """Held values by (holder, key), least recently used first, with their sizes."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit  # None: read $RL_BOARD_RUN_MEMORY_MB on every admission
        self._lock = threading.Lock()
        self._held: OrderedDict[tuple[int, Hashable], _Entry] = OrderedDict()

    def admit(self, holder: Holder, key: Hashable, value: object, size: int) -> None:
        """holder now holds value under key (most recently used); values beyond the budget,
        least recently used first, are dropped from their holders."""
        with self._lock:
            self._held[(id(holder), key)] = (weakref.ref(holder), weakref.ref(value), size)
            self._held.move_to_end((id(holder), key))
            evicted = self._over_budget()
        for dropped_key, (holder_ref, value_ref, _) in evicted:
            owner, dropped = holder_ref(), value_ref()
            if owner is not None and dropped is not None:
                owner.drop(dropped_key, dropped)

    def touch(self, holder: Holder, key: Hashable) -> None:
        """key's value was just used."""
        with self._lock:
            if (id(holder), key) in self._held:
                self._held.move_to_end((id(holder), key))

    def used(self) -> int:
        """Bytes held by values still alive."""
        with self._lock:
            return sum(size for _, value, size in self._held.values() if value() is not None)

    def _over_budget(self) -> list[tuple[Hashable, _Entry]]:
        limit = self.limit if self.limit is not None else budget_bytes()
        gone = [name for name, (holder, value, _) in self._held.items()
                if holder() is None or value() is None]
        for name in gone:  # dropped by their holder already (its own count), or it is gone
            del self._held[name]
        total, evicted = sum(size for *_, size in self._held.values()), []
        while total > limit and len(self._held) > 1:
            (_, key), entry = self._held.popitem(last=False)
            evicted.append((key, entry))
            total -= entry[2]
        return evicted


BUDGET = Budget()  # the process's one budget, shared by every Catalog
