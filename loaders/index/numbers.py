"""A served run's numbers: held in a frame, or read from its index file by column and step.

A run of a million samples is about 265 MB of numbers as a frame; a view draws a few
columns of it, or one step.  So a run reopened from its index holds none of it: a
whole-run view reads the columns it aggregates (`read`), a step view the row groups of its
step (`step`), and neither is kept.  The index file is sorted by step, so a step is one
run of rows, found in `StepRanges` (index_columns.py: a step's first and last row, made
once from the step column).  A run with no index file behind it (`--no-cache`, a followed
run between saves) holds its frame, and answers the same questions from it.

A part of a run (train or validation samples, the trained or left-out ones) is the same
numbers with conditions on its flag columns (`where`): its rows are renumbered from 0 as a
frame's filter would, and keep their S.ROW (their row in the index file).
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, replace
from typing import TypeVar

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.index.file_previews import FilePreviews
from loaders.index.grown_columns import GrownColumns
from loaders.index.index_columns import IndexColumns, StepRanges
from loaders.index.previews import Previews, served

T = TypeVar("T")
Condition = tuple[str, bool]  # (a bool column, the value every kept row has in it)
CHUNK_ROWS = 1 << 17  # rows per_step reads at a time: ~30 columns of them are ~30 MB


@dataclass(frozen=True, eq=False)
class Numbers:
    """The rows of a run (or of a part of it, `where`) and their number columns, from a
    held frame or from an index file."""
    held: pd.DataFrame | None = None
    file: IndexColumns | GrownColumns | None = None  # Grown: a followed run's, between saves
    where: tuple[Condition, ...] = ()
    _memo: dict = field(default_factory=dict, repr=False)

    @property
    def columns(self) -> list[str]:
        return list(self.held.columns) if self.held is not None else [*self.file.names, S.ROW]

    def part(self, *conditions: Condition) -> Numbers:
        """These numbers, only the rows that also meet `conditions`."""
        return replace(self, where=(*self.where, *conditions), _memo={})

    def read(self, columns: Iterable[str] | None = None) -> pd.DataFrame:
        """The kept rows, renumbered from 0, with these columns (every one when None)."""
        names = self._names(columns)
        if self.held is not None:
            return self._kept(self.held, names)
        return self._kept(self.file.read([*names, *self._flags(names)]), names)

    def step(self, step: int, columns: Iterable[str] | None = None) -> pd.DataFrame:
        """The kept rows of one step, with these columns, indexed by their place among the
        kept rows (as a filter of `read()` would index them)."""
        rows = self._span(*self._stored_ranges.rows(step), self._names(columns))
        first = self.ranges.rows(step)[0]
        return rows.set_axis(pd.RangeIndex(first, first + len(rows)))

    def per_step(self, columns: Iterable[str], make: Callable[[pd.DataFrame], T],
                 rows: int | None = None, steps: Collection[int] | None = None) -> list[T]:
        """make() of the kept rows of whole steps (of `steps` only, when given), about `rows`
        at a time, in step order: an aggregate by step made over the whole run with one
        chunk of it in memory."""
        names = self._names(columns)
        ranges = self._stored_ranges if steps is None else self._stored_ranges.only(steps)
        spans = _chunks(ranges, rows or CHUNK_ROWS) or [(0, 0)]  # none: make() of no row
        return [make(self._span(start, stop, names)) for start, stop in spans]

    def matching(self, column: str, value: object) -> pd.DataFrame:
        """The kept rows whose `column` is `value` (one prompt's samples over the run, say),
        every column: the column is read whole, the rows by their row groups."""
        if self.held is not None:
            rows = self.read()
            return rows[rows[column] == value]
        found = self.read([column, S.ROW])
        found = found[found[column] == value]
        return self.file.take(found[S.ROW].to_numpy(), self.columns).set_axis(found.index)

    @property
    def held_ranges(self) -> StepRanges:
        """Where each step's rows are in the held frame (sorted by step, as indexed)."""
        return self._once("held", lambda: StepRanges.of(self.held[S.STEP].to_numpy()))

    @property
    def _stored_ranges(self) -> StepRanges:
        """Where each step's rows are in the held frame or the index file, every row."""
        return self.file.ranges if self.file is not None else self.held_ranges

    @property
    def ranges(self) -> StepRanges:
        """Where each step's kept rows are among the kept rows."""
        if not self.where:
            return self._stored_ranges
        return self._once("ranges", lambda: StepRanges.of(
            self.read([S.STEP])[S.STEP].to_numpy()))

    @property
    def size(self) -> int:
        if not self.where:
            return len(self.held) if self.held is not None else self.file.rows
        return int(self.ranges.ends[-1]) if len(self.ranges.ends) else 0

    @property
    def steps(self) -> tuple[int, ...]:
        """The steps with a kept row, ascending."""
        return tuple(self.ranges.steps.tolist())

    def _names(self, columns: Iterable[str] | None) -> list[str]:
        """The columns asked for that the run has (every one for None), in its order."""
        return self.columns if columns is None else [c for c in self.columns if c in columns]

    def _flags(self, names: list[str]) -> list[str]:
        """The flag columns the part's conditions need beyond `names`."""
        return [column for column, _ in self.where if column not in names]

    def _span(self, start: int, stop: int, names: list[str]) -> pd.DataFrame:
        """The kept rows among stored rows start..stop-1, these columns."""
        if self.held is not None:
            return self._kept(self.held.iloc[start:stop], names)
        return self._kept(self.file.rows_between(start, stop, [*names, *self._flags(names)]),
                          names)

    def _kept(self, frame: pd.DataFrame, names: list[str]) -> pd.DataFrame:
        keep = np.ones(len(frame), dtype=bool)
        for column, value in self.where:
            keep &= frame[column].to_numpy(dtype=bool) == value
        if keep.all():
            return frame[names] if list(frame.columns) != names else frame
        return frame.loc[keep, names].reset_index(drop=True)

    def _once(self, key: str, make):  # noqa: ANN001, ANN202 - a private memo of small values
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]


def number_columns(names: Iterable[str]) -> list[str]:
    """Of an index file's columns, those a run's numbers read: not what is read by row,
    nor a row number or key (made for the rows read, never stored: a planted one is not
    read)."""
    return [n for n in names if n not in S.READ_BY_ROW and n not in (S.ROW, S.KEY)]


def served_numbers(held: pd.DataFrame | None, columns: IndexColumns | None,
                   previews: Previews | None) -> tuple[Numbers, Previews]:
    """The numbers a run serves and where its previews are read.  A run with an index file
    (`previews` read from it) leaves its numbers there (`columns`, when they were read
    from that file; else the file's own), and lets go of the frame it was indexed into; a
    run without one holds its frame (`held`)."""
    if isinstance(previews, FilePreviews) and previews.num_rows:  # (no rows: no types)
        if columns is None or columns.file is not previews:
            columns = IndexColumns(previews, number_columns(previews.names))
        return Numbers(file=columns), previews
    frame, previews = served(held, previews)
    return Numbers(held=frame), previews


def _chunks(ranges: StepRanges, rows: int) -> list[tuple[int, int]]:
    """Row spans of whole steps, each about `rows` long (one step may be longer)."""
    spans, start, last = [], None, None
    for first, end in zip(ranges.starts.tolist(), ranges.ends.tolist()):
        if start is not None and first != last:  # a step left out between: a span ends
            spans.append((start, last))
            start = None
        start = first if start is None else start
        last = end
        if end - start >= rows:
            spans.append((start, end))
            start = None
    if start is not None:
        spans.append((start, last))
    return spans


def stacked(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The per-step frames of per_step as one (each step in one part only)."""
    return pd.concat(parts) if len(parts) > 1 else parts[0]
