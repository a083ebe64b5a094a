"""The per-step tables a grown run takes over from the run it grew from.

Following a live run grows it every few seconds, and a grown run is a new Run: its step
statistics and health signals, made over every sample, would be made again from nothing on
each growth (0.9 s and 0.3 s on a million samples).  Each step's part of them is made from
that step's rows alone, so a growth only needs the steps whose rows it added, replaced or let
go (Stored.changed_steps, found by the refresh); the rest are the old run's, taken over by
the part of the run they belong to (its flag conditions).  A refresh that moved a run-level
fact (the inferred length cap, the extra columns) says nothing changed: everything is made
again.
"""
from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

import pandas as pd

from loaders.index.numbers import Condition

Tables = dict[str, tuple[pd.DataFrame, ...]]  # a part's tables by name


@dataclass(frozen=True)
class Carried:
    changed: frozenset[int]  # the steps to make again
    tables: dict[tuple[Condition, ...], Tables]  # the old run's, by a part's conditions

    def patched(self, where: tuple[Condition, ...], name: str,
                make: Callable[[Collection[int]], tuple[pd.DataFrame, ...]]
                ) -> tuple[pd.DataFrame, ...] | None:
        """The old tables `name` of this part with the changed steps made again by make(steps);
        None when the old run had not made them."""
        old = self.tables.get(where, {}).get(name)
        if old is None:
            return None
        return tuple(_patched(before, after, self.changed)
                     for before, after in zip(old, make(self.changed)))


def _patched(before: pd.DataFrame, after: pd.DataFrame, changed: Collection[int]
             ) -> pd.DataFrame:
    """before (indexed by step) without the changed steps, with after's rows, by step."""
    if before.empty:
        return after
    kept = before.drop(index=[s for s in changed if s in before.index])
    if after.empty:
        return kept
    return pd.concat([kept, after]).sort_index(kind="stable")
