"""Tables a run derives from every sample, kept beside its index file.

A per-step aggregate over a million samples takes a second or more to make (the step
statistics' quantiles, the health signals) and a few hundred KB to keep; a server started
again, or the CLI on the same dump, would make it again.  So each is written beside the
index file the run reads (`derived/NAME.VERSION.parquet`), named by that file's version (its
size and mtime as the run holds it open), the first time a view asks for it, and read back
after that.  Only the run reading the index now on disk writes, and then removes the
tables of other versions.  What is read back is checked as the index is
(loaders.index.trust): a frame of numbers only, else it is made again.  A table that cannot
be written (a full disk, a cache dir that is a link) is only not kept.
"""
from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

DERIVED_DIR = "derived"
_NAME = re.compile(r"[a-z0-9_=.-]+")


class DerivedTables:
    """The derived tables of one version of an index file."""

    def __init__(self, index_path: Path, version: tuple[int, int]) -> None:
        self._index, self._dir = index_path, index_path.parent / DERIVED_DIR
        self._version = f"{version[0]}-{version[1]}"

    def get(self, name: str, make: Callable[[], pd.DataFrame]) -> pd.DataFrame:
        """The table `name` of this version: read back, or made (and kept)."""
        return self.get_all((name,), lambda: (make(),))[0]

    def get_all(self, names: tuple[str, ...], make: Callable[[], tuple[pd.DataFrame, ...]]
                ) -> tuple[pd.DataFrame, ...]:
        """Tables made together (one pass over the run): read back, or made (and kept)."""
        bad = [name for name in names if not _NAME.fullmatch(name)]
        if bad:
            raise ValueError(f"not a table name: {bad[0]!r}")
        paths = [self._dir / f"{name}.{self._version}.parquet" for name in names]
        frames = [_read(path) for path in paths]
        if any(frame is None for frame in frames):
            frames = make()
            with contextlib.suppress(OSError, pa.ArrowException):
                self._keep(paths, frames)
        return tuple(frames)

    def _keep(self, paths: list[Path], frames: tuple[pd.DataFrame, ...]) -> None:
        on_disk = os.stat(self._index)
        if f"{on_disk.st_size}-{on_disk.st_mtime_ns}" != self._version:
            return  # an index saved since (a followed run): its run keeps its own
        with contextlib.suppress(FileExistsError):
            os.mkdir(self._dir)
        if not stat.S_ISDIR(os.lstat(self._dir).st_mode):
            return  # a link or a file planted there: never written through
        for path, frame in zip(paths, frames):
            _write(path, frame)
        for old in self._dir.glob("*.parquet"):
            if old.name.rsplit(".", 2)[-2] != self._version:
                with contextlib.suppress(OSError):
                    old.unlink()


def _write(path: Path, frame: pd.DataFrame) -> None:
    """frame to path, whole or not at all (a temp file renamed in)."""
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".partial-")
    try:
        with os.fdopen(handle, "wb") as out:
            pq.write_table(pa.Table.from_pandas(frame), out)
        os.replace(temp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)


def _read(path: Path) -> pd.DataFrame | None:
    """The table at path, if it is one this module could have written: numbers only."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        frame = pq.read_table(path).to_pandas()
    except (OSError, ValueError, TypeError, KeyError, pa.ArrowException):
        return None
    if not all(pd.api.types.is_numeric_dtype(kind) for kind in frame.dtypes):
        return None
    if not pd.api.types.is_numeric_dtype(frame.index.dtype):
        return None
    return frame
