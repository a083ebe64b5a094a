"""A followed run's numbers between two saves: its index file's rows before the steps a
growth touched, read on demand as ever, and the rows from those steps on held in memory.

A trainer appends steps in order, so a growth re-sorts only the rows of the steps it adds
to (loaders.index.append); the rows before them are the index file's first rows, as they
were saved.  Holding them all again between saves held the whole run (1.1-1.4 GB for a
million samples on top of the served 0.4 GB); now a followed run holds the rows of its last
steps.  GrownColumns answers what IndexColumns answers (numbers.Numbers reads either): the
rows in the file's order, then the held rows, which sort after every one of them.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.index.file_previews import FilePreviews
from loaders.index.index_columns import IndexColumns, StepRanges


class GrownColumns:
    """The first `prefix` rows of an index file (whole steps), then `tail`: the held rows
    of the later steps, sorted as an index sorts them, their texts apart (S.ROW numbers
    them: a file row keeps its own, a new row is numbered past every file row)."""

    def __init__(self, base: IndexColumns, prefix: int, tail: pd.DataFrame) -> None:
        self.base, self.prefix, self.tail = base, prefix, tail.reset_index(drop=True)
        self.names = list(base.names)
        self.rows = prefix + len(self.tail)
        self._ranges: StepRanges | None = None

    @property
    def file(self) -> FilePreviews:
        """The index file the first rows are read from (not all of the run's rows: what is
        kept beside that file is not this run's; loaders.serve.run)."""
        return self.base.file

    def read(self, columns: Sequence[str]) -> pd.DataFrame:
        """Every row, these columns."""
        return self.rows_between(0, self.rows, columns)

    def rows_between(self, start: int, stop: int, columns: Sequence[str]) -> pd.DataFrame:
        """Rows start..stop-1, these columns: the file's, then the held ones."""
        pieces = []
        if start < self.prefix:
            pieces.append(self.base.rows_between(start, min(stop, self.prefix), columns))
        if stop > self.prefix:
            held = self.tail.iloc[max(start, self.prefix) - self.prefix:stop - self.prefix]
            pieces.append(held[list(columns)])
        return self._joined(pieces, columns)

    def take(self, rows: np.ndarray, columns: Sequence[str]) -> pd.DataFrame:
        """The rows of these S.ROW values, these columns, in the order asked."""
        rows = np.asarray(rows, dtype=np.int64)
        filed = rows < self.prefix  # a held row's number is past the file's first rows
        where = pd.Series(np.arange(len(self.tail)), index=self.tail[S.ROW].to_numpy())
        held = self.tail.iloc[where.loc[rows[~filed]].to_numpy()][list(columns)]
        both = self._joined([self.base.take(np.sort(rows[filed]), columns), held], columns)
        asked = np.concatenate([np.flatnonzero(filed)[np.argsort(rows[filed], kind="stable")],
                                np.flatnonzero(~filed)])
        return both.iloc[np.argsort(asked, kind="stable")].reset_index(drop=True)

    @property
    def ranges(self) -> StepRanges:
        """Each step's rows: the file's steps before the held ones, then the held steps."""
        if self._ranges is None:
            filed = self.base.ranges
            keep = filed.ends <= self.prefix
            held = StepRanges.of(self.tail[S.STEP].to_numpy())
            self._ranges = StepRanges(np.concatenate([filed.steps[keep], held.steps]),
                                      np.concatenate([filed.starts[keep],
                                                      held.starts + self.prefix]),
                                      np.concatenate([filed.ends[keep], held.ends + self.prefix]))
        return self._ranges

    def categories(self, name: str) -> pd.Index:
        """A category column's categories over both parts (sorted, as combine sorts them)."""
        filed = self.base.categories(name)
        if name not in self.tail or not isinstance(self.tail[name].dtype, pd.CategoricalDtype):
            return filed
        return filed.union(self.tail[name].cat.categories).sort_values()

    def _joined(self, pieces: list[pd.DataFrame], columns: Sequence[str]) -> pd.DataFrame:
        """The pieces one after the other, renumbered from 0; a category column with the
        categories of both parts."""
        pieces = [piece.reset_index(drop=True) for piece in pieces if len(piece)] or [
            self.tail.iloc[:0][list(columns)]]
        for name in columns:
            if isinstance(pieces[0][name].dtype, pd.CategoricalDtype):
                both = self.categories(name)
                pieces = [p.assign(**{name: p[name].cat.set_categories(both)}) for p in pieces]
        return pd.concat(pieces, ignore_index=True) if len(pieces) > 1 else pieces[0]


def next_row_of(columns: IndexColumns | GrownColumns) -> int:
    """The first S.ROW no row of these numbers has (a file's rows are numbered in order)."""
    if isinstance(columns, IndexColumns):
        return columns.rows
    held = int(columns.tail[S.ROW].max()) + 1 if len(columns.tail) else 0
    return max(columns.base.rows, held)
