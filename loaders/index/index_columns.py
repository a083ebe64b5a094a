"""An index file's number columns read on demand (IndexColumns), and where each step's rows
are in a file sorted by step (StepRanges): what numbers.Numbers reads a run's numbers with."""
from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from loaders import schema as S
from loaders.index.file_previews import FilePreviews
from loaders.index.trust import has_dtype

_CATEGORIES = tuple(n for n, kind in S.SUMMARY_DTYPES.items() if kind == "category")


@dataclass(frozen=True)
class StepRanges:
    """Each step's rows in a file sorted by step: steps[i] is rows starts[i]..ends[i]-1."""
    steps: np.ndarray
    starts: np.ndarray
    ends: np.ndarray

    @classmethod
    def of(cls, step_column: np.ndarray) -> StepRanges:
        """The ranges of a step column in order: where it changes (a pass, where np.unique
        sorted a million rows in 40 ms); np.unique's first rows of a column out of order."""
        if len(step_column) and (step_column[1:] >= step_column[:-1]).all():
            starts = np.flatnonzero(np.r_[True, step_column[1:] != step_column[:-1]])
            steps = step_column[starts]
        else:
            steps, starts = np.unique(step_column, return_index=True)
        ends = np.append(starts[1:], len(step_column)).astype(np.int64)
        return cls(steps, starts.astype(np.int64), ends)

    def only(self, steps: Collection[int]) -> StepRanges:
        """These ranges, of `steps` alone."""
        keep = np.isin(self.steps, np.fromiter(steps, dtype=np.int64, count=len(steps)))
        return StepRanges(self.steps[keep], self.starts[keep], self.ends[keep])

    def rows(self, step: int) -> tuple[int, int]:
        at = int(np.searchsorted(self.steps, step))
        if at == len(self.steps) or self.steps[at] != step:
            return 0, 0
        return int(self.starts[at]), int(self.ends[at])


class IndexColumns:
    """The number columns of an index file (sorted by step), read on demand: never held."""

    def __init__(self, file: FilePreviews, names: Sequence[str]) -> None:
        self.file, self.names = file, list(names)
        self.rows = file.num_rows
        self._ranges: StepRanges | None = None
        self._categories: dict[str, pd.Index] = {}

    def read(self, columns: Sequence[str]) -> pd.DataFrame:
        """Every row, these columns (S.ROW made, not read)."""
        stored = [c for c in columns if c != S.ROW]
        frame = self._frame(self.file.read(None, stored), stored)
        return self._numbered(frame, columns, 0)

    def rows_between(self, start: int, stop: int, columns: Sequence[str]) -> pd.DataFrame:
        """Rows start..stop-1 (read by their row groups), these columns."""
        stored = [c for c in columns if c != S.ROW]
        groups, first = self.file.groups_between(start, stop)
        table = self.file.read(groups, stored).slice(start - first, stop - start)
        return self._numbered(self._frame(table, stored), columns, start)

    def take(self, rows: np.ndarray, columns: Sequence[str]) -> pd.DataFrame:
        """These rows (S.ROW values, ascending), these columns: a row group at a time."""
        stored = [c for c in columns if c != S.ROW]
        frame = self._frame(self.file.take(rows, tuple(stored)), stored)
        if S.ROW in columns:
            frame[S.ROW] = rows
        return frame[list(columns)]

    @property
    def ranges(self) -> StepRanges:
        if self._ranges is None:
            steps = self.file.read(None, [S.STEP]).column(0).to_numpy()
            if len(steps) > 1 and bool((np.diff(steps) < 0).any()):
                raise self.file.damaged("its rows are not sorted by step")  # not the board's
            self._ranges = StepRanges.of(steps)
        return self._ranges

    def _frame(self, table: pa.Table, names: Sequence[str]) -> pd.DataFrame:
        """table as the whole run's frame types it: a category column has the run's
        categories, in its order, whichever rows were read."""
        frame = table.to_pandas()
        for name in (n for n in _CATEGORIES if n in names):
            frame[name] = frame[name].cat.set_categories(self.categories(name))
        for name in names:  # as the open checked the first row group (ondisk._checked)
            kind = S.SUMMARY_DTYPES.get(name)
            if kind is not None and not has_dtype(frame[name], kind):
                raise self.file.damaged(f"column {name!r} is {frame[name].dtype}, not {kind}")
        return frame

    def categories(self, name: str) -> pd.Index:
        if name not in self._categories:
            column = self.file.read(None, [name]).to_pandas()[name]
            # as a frame made by the index has them (table.combine makes the file names
            # text before they become categories), not as Arrow gives them
            categories = column.cat.categories
            self._categories[name] = (categories.astype("string") if name == S.FILE
                                      else categories)
        return self._categories[name]

    @staticmethod
    def _numbered(frame: pd.DataFrame, columns: Sequence[str], first: int) -> pd.DataFrame:
        if S.ROW in columns:
            frame[S.ROW] = np.arange(first, first + len(frame), dtype=np.int64)
        return frame[list(columns)]
