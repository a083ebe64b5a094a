"""A served run's previews read from its open index file (loaders.index.previews), and the
errors such a read raises when the file is no longer the one the run opened."""
from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from loaders import schema as S


class IndexWrittenOver(Exception):
    """The index file a run reads by row was written over in place since the run opened it
    (the board replaces an index by rename, which leaves an open run its own file): what it
    holds now belongs to no row of the run, so the run must be opened again."""


class IndexDamaged(IndexWrittenOver):
    """The index file a run reads cannot be read as the index it claimed to be at open (a
    damaged page, a value of the wrong type past its first row group)."""


def _stamp(handle: BinaryIO) -> tuple[int, int]:
    stat = os.fstat(handle.fileno())
    return stat.st_size, stat.st_mtime_ns


class FilePreviews:
    """Previews read from an open index file, a few row groups at a time."""

    def __init__(self, handle: BinaryIO, path: Path | None = None) -> None:
        self._lock = threading.Lock()  # one reader at a time: the handle has one position
        self._handle, self._stamp = handle, _stamp(handle)
        self.path = path  # where the file was opened (None: not known)
        self._file = pq.ParquetFile(handle)
        sizes = [self._file.metadata.row_group(i).num_rows
                 for i in range(self._file.metadata.num_row_groups)]
        self._starts = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])

    def take(self, rows: np.ndarray, columns: tuple[str, ...] = S.READ_BY_ROW) -> pa.Table:
        rows = np.asarray(rows, dtype=np.int64)
        if not len(rows):
            return self.read([], columns).slice(0, 0)
        # a row group at a time: rows spread over the run never have all of it read at once
        group_of = np.searchsorted(self._starts, rows, side="right") - 1
        order = np.argsort(group_of, kind="stable")
        groups, first = np.unique(group_of[order], return_index=True)
        bounds = np.append(first, len(order))
        parts = [self.read([int(g)], columns).take(pa.array(
                     rows[order[start:stop]] - self._starts[g], pa.int64()))
                 for g, start, stop in zip(groups, bounds[:-1], bounds[1:])]
        table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        return table.take(pa.array(np.argsort(order), pa.int64()))  # in the order asked

    @property
    def names(self) -> list[str]:
        """The file's column names."""
        return list(self._file.schema_arrow.names)

    def close(self) -> None:
        self._handle.close()

    @property
    def metadata(self) -> pq.FileMetaData:
        return self._file.metadata

    @property
    def version(self) -> tuple[int, int]:
        """The file's size and mtime as opened: what names its version."""
        return self._stamp

    @property
    def num_rows(self) -> int:
        return int(self._starts[-1])

    def groups_between(self, start: int, stop: int) -> tuple[list[int], int]:
        """The row groups holding rows start..stop-1, and the first row of the first."""
        first = int(np.searchsorted(self._starts, start, side="right") - 1)
        last = int(np.searchsorted(self._starts, max(stop - 1, start), side="right") - 1)
        first, last = max(first, 0), min(last, len(self._starts) - 2)
        return list(range(first, last + 1)), int(self._starts[first])

    def read(self, groups: list[int] | None, columns: Sequence[str] = S.READ_BY_ROW
             ) -> pa.Table:
        """These row groups (every one when None), these columns."""
        with self._lock:
            if _stamp(self._handle) != self._stamp:  # one fstat a read: a file written over
                raise IndexWrittenOver(  # would give other rows' values
                    "this run's index file was written over while the run was open (not by "
                    "the board): Refresh to open the run again")
            try:
                if groups is None:
                    return self._file.read(columns=list(columns))
                return self._file.read_row_groups(groups, columns=list(columns))
            except (OSError, pa.ArrowException) as err:
                raise self.damaged(" ".join(str(err).split())[:120]) from None

    def damaged(self, why: str) -> IndexDamaged:
        """The error to raise for a file that cannot be read as the index it claims to be;
        the file is removed first (when it is still the one on disk), so the next open
        builds the index again instead of trusting it once more."""
        if self.path is not None:
            with contextlib.suppress(OSError):
                on_disk = os.stat(self.path)
                held = os.fstat(self._handle.fileno())
                if (on_disk.st_ino, on_disk.st_dev) == (held.st_ino, held.st_dev):
                    os.unlink(self.path)
        return IndexDamaged(f"this run's index file is damaged ({why}); it is removed: "
                            "Refresh to build it again")

    @property
    def held_bytes(self) -> int:
        return 0
