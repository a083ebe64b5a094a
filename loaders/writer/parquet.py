"""The Parquet side of the reference writer: one rank's samples as columnar files.

Imports neither streamlit nor torch nor anything of the board but columns.py (a trainer
copies the package), and the board's summary when it can (stored_summary).  `write()` only
converts the token arrays to compact numpy arrays and buffers the sample; a flush (when the
step changes (unless the sink spans steps: `convert`), every `flush_rows` samples, on
`flush()` or `close()`) writes the buffer as one file,

    DIR/rollout_data_rank_{rank}.step_{step:06d}.{part:04d}.parquet   (rank_val{rank}: validation)

through a hidden temp file that is renamed into place, so a reader sees a whole file or
none.  The columns are columns.py's (and docs/dump-format.md's, "Parquet dumps").
Compression is zstd; row groups hold ROW_GROUP_ROWS samples, so one sample is read back by
decompressing one row group.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Mapping
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .columns import cell, encodings, table_of

ROW_GROUP_ROWS = 64  # one sample read back decompresses this many (about 10 ms at 1k tokens)
FLUSH_ROWS = 1024
ORPHAN_SECONDS = 600
_STEP = "step"


def file_name(rank: int, step: int, part: int, validation: bool = False) -> str:
    kind = f"rank_val{rank}" if validation else f"rank_{rank}"
    return f"rollout_data_{kind}.step_{step:06d}.{part:04d}.parquet"


def write_atomically(table: pa.Table, path: Path) -> None:
    """Write through a hidden temp file in the same dir (fsync, rename): all or nothing.
    The board's summary of the rows goes in the footer when the board is importable."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    summary = stored_summary(table, path.name)
    try:
        with open(tmp, "wb") as handle:
            with pq.ParquetWriter(handle, table.schema, compression="zstd",
                                  **encodings(table.schema)) as writer:
                writer.write_table(table, row_group_size=ROW_GROUP_ROWS)
                if summary:
                    writer.add_key_value_metadata(summary)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def stored_summary(table: pa.Table, name: str) -> dict[bytes, bytes]:
    """The footer entry holding the board's summary of the rows (loaders.index
    .stored_summary), so the board's cold index reads no row; nothing when this package was
    copied without the board, or the rows are not all plain samples."""
    try:
        from loaders.index.footer_summary import summary_blob
        from loaders.index.stored_summary import KEY
    except ImportError:
        return {}
    try:
        blob = summary_blob(table, name)
    except Exception:  # the board's summary never costs the trainer its samples
        return {}
    return {KEY: blob} if blob is not None else {}


def _remove_orphans(directory: Path, stem: str, age: float = ORPHAN_SECONDS) -> None:
    """Temp files of this rank that a crashed writer left (older than `age` seconds: a
    younger one may be another writer's, mid-write)."""
    cutoff = time.time() - age
    for tmp in directory.glob(f".{stem}.step_*.tmp"):
        with contextlib.suppress(OSError):
            if tmp.stat().st_mtime < cutoff:
                tmp.unlink()


def _int_step(step: object) -> int:
    """The step for the file name (the column keeps the value as written)."""
    try:
        return int(float(step))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return 0


class ParquetSink:
    """Buffers one rank's samples and writes them a step (or FLUSH_ROWS samples) a file.
    With `span_steps` (a converted dump, which no reader follows as it is written), a file
    holds FLUSH_ROWS samples whatever their steps, named by its first sample's step: a run
    of small steps is then a few files, not one a step (a file costs its reader a footer,
    however few rows it holds)."""

    def __init__(self, directory: Path, rank: int, validation: bool,
                 flush_rows: int = FLUSH_ROWS, span_steps: bool = False) -> None:
        self.directory, self.rank, self.validation = directory, rank, validation
        self.flush_rows, self.span_steps = flush_rows, span_steps
        self.buffer: list[dict] = []
        self.step: object = None
        self.parts: dict[object, int] = {}  # files written so far, by step
        self.written: list[Path] = []
        _remove_orphans(directory, file_name(rank, 0, 0, validation).split(".step_")[0])

    def add(self, sample: Mapping) -> None:
        step = sample.get(_STEP)
        if self.buffer and step != self.step and not self.span_steps:
            self.flush()
        if not self.buffer:
            self.step = step  # the file's name: its first sample's step
        self.buffer.append({key: cell(value) for key, value in sample.items()})
        if len(self.buffer) >= self.flush_rows:
            self.flush()

    def flush(self) -> Path | None:
        """Write the buffered samples as one file; its path (None when nothing was held)."""
        if not self.buffer:
            return None
        step = _int_step(self.step)
        part = self.parts.get(step, 0)
        path = self.directory / file_name(self.rank, step, part, self.validation)
        while path.exists():  # a restarted trainer: never replace what an earlier run wrote
            part += 1
            path = self.directory / file_name(self.rank, step, part, self.validation)
        self.parts[step] = part + 1
        write_atomically(table_of(self.buffer), path)
        self.buffer = []
        self.written.append(path)
        return path
