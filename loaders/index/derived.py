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
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from loaders.index.cachedir import open_dir, read_index, replace_index

DERIVED_DIR = "derived"
_NAME = re.compile(r"[a-z0-9_=-]+")
_FILE = re.compile(r"([a-z0-9_=-]+)\.(\d+-\d+)\.parquet")  # NAME.VERSION.parquet


class DerivedTables:
    """The derived tables of one version of an index file."""

    def __init__(self, index_path: Path, version: tuple[int, int]) -> None:
        self._index, self._dir = index_path, index_path.parent / DERIVED_DIR
        self._version = f"{version[0]}-{version[1]}"

    def get_all(self, names: tuple[str, ...], make: Callable[[], tuple[pd.DataFrame, ...]]
                ) -> tuple[pd.DataFrame, ...]:
        """Tables made together (one pass over the run): read back, or made (and kept)."""
        bad = [name for name in names if not _NAME.fullmatch(name)]
        if bad:
            raise ValueError(f"not a table name: {bad[0]!r}")
        files = [f"{name}.{self._version}.parquet" for name in names]
        frames = [_read(self._dir, file) for file in files]
        if any(frame is None for frame in frames):
            frames = make()
            with contextlib.suppress(OSError, pa.ArrowException):
                self._keep(files, frames)
        return tuple(frames)

    def _keep(self, files: list[str], frames: tuple[pd.DataFrame, ...]) -> None:
        """Written through the cache dir's own temp-and-rename, the dir opened without
        following a link (loaders.index.cachedir); then the tables of other versions go."""
        on_disk = os.stat(self._index)
        if f"{on_disk.st_size}-{on_disk.st_mtime_ns}" != self._version:
            return  # an index saved since (a followed run): its run keeps its own
        for file, frame in zip(files, frames):
            replace_index(self._dir, lambda handle, frame=frame: pq.write_table(
                pa.Table.from_pandas(frame), handle), file)
        dir_fd = open_dir(self._dir)
        try:
            for old in os.listdir(dir_fd):
                found = _FILE.fullmatch(old)
                if found and found.group(2) != self._version:
                    with contextlib.suppress(OSError):
                        os.unlink(old, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)


def _read(place: Path, file: str) -> pd.DataFrame | None:
    """The table `file` in place, if it is one this module could have written: a regular
    file (never through a link), a frame of numbers with a numeric index."""
    try:
        frame = read_index(place, lambda handle: pq.read_table(handle).to_pandas(), file)
    except (OSError, ValueError, TypeError, KeyError, pa.ArrowException):
        return None
    if frame is None or not all(pd.api.types.is_numeric_dtype(k) for k in frame.dtypes):
        return None
    if not pd.api.types.is_numeric_dtype(frame.index.dtype):
        return None
    return frame
