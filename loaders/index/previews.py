"""What a served run reads per shown row: kept out of its frame, read by row on demand.

The text previews (prompt, response, reference response, ground truth), where each sample's
line is (offset, length, check) and the token digests are half of a summary frame, and a
whole-run view never needs them: only the rows a page shows do (schema.READ_BY_ROW).  So a
served run holds its numbers in memory and reads these columns for the rows it draws from
the index file it was written to or read from (file_previews.FilePreviews: one row group of
ROW_GROUP_ROWS samples per read).  The file is held open, so an index replaced on disk since
(a followed run saved again) leaves this run reading its own snapshot.  A run that has no
index on disk keeps them in memory (HeldPreviews).  Rows are named by schema.ROW, a sample's
row in that file; a sample's KEY is made for the rows read.
"""
from __future__ import annotations

import warnings
from typing import Protocol

import numpy as np
import pandas as pd
import pyarrow as pa

from loaders import schema as S
from loaders.index.runs import decoded_text

# rows per row group of the index file: a step of 8,192 samples is one or two reads
ROW_GROUP_ROWS = 16_384


class Previews(Protocol):
    def take(self, rows: np.ndarray, columns: tuple[str, ...] = S.READ_BY_ROW) -> pa.Table:
        """The preview columns of these rows (S.ROW values), in their order."""

    @property
    def held_bytes(self) -> int:
        """What they take in memory."""


class HeldPreviews:
    """Previews held in memory, for a run with no index file (a coded text column, as a
    first index's sort leaves the prompts, is decoded for the rows read)."""

    def __init__(self, table: pa.Table) -> None:
        self._table = table.select(list(S.READ_BY_ROW)).combine_chunks()

    def take(self, rows: np.ndarray, columns: tuple[str, ...] = S.READ_BY_ROW) -> pa.Table:
        return _decoded(self._table.select(list(columns)).take(pa.array(rows, pa.int64())))

    def columns(self) -> list[pa.ChunkedArray]:
        """Every row of every column, in READ_BY_ROW's order, coded text decoded."""
        return _decoded(self._table).columns

    @property
    def num_rows(self) -> int:
        return self._table.num_rows

    @property
    def held_bytes(self) -> int:
        return self._table.nbytes


def _decoded(table: pa.Table) -> pa.Table:
    """Coded columns as their text, of 64-bit offsets (as pandas' text is written)."""
    for at, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            table = table.set_column(at, field.name, decoded_text(table.column(at)))
    return table


class LayeredPreviews:
    """A followed run's previews between two saves of its index: rows numbered below `first`
    are read where they were (its index file, or the layers before), the rows it grew by
    since are held in memory, numbered first, first + 1, ... So a growth reads no old text:
    its cost follows the new bytes, not the run (a save writes them all, every so often)."""

    def __init__(self, below: Previews, first: int, grown: HeldPreviews) -> None:
        self.below, self.first, self.grown = below, first, grown

    def take(self, rows: np.ndarray, columns: tuple[str, ...] = S.READ_BY_ROW) -> pa.Table:
        rows = np.asarray(rows, dtype=np.int64)
        new = rows >= self.first
        if not new.any():
            return self.below.take(rows, columns)
        if new.all():
            return self.grown.take(rows - self.first, columns)
        both = pa.concat_tables([self.below.take(rows[~new], columns),
                                 self.grown.take(rows[new] - self.first, columns)],
                                promote_options="permissive")
        at = np.concatenate([np.flatnonzero(~new), np.flatnonzero(new)])
        return both.take(pa.array(np.argsort(at, kind="stable"), pa.int64()))

    @property
    def held_bytes(self) -> int:
        return self.below.held_bytes + self.grown.held_bytes


def next_row(frame: pd.DataFrame) -> int:
    """The first S.ROW no row of a served frame has."""
    return int(frame[S.ROW].max()) + 1 if len(frame) else 0


def grown_previews(frame: pd.DataFrame, below: Previews, first: int
                   ) -> tuple[pd.DataFrame, LayeredPreviews]:
    """A grown run's served frame and previews: its rows numbered from `first` on (what it
    grew by, with their texts) held in memory, the others read as before."""
    new = frame[frame[S.ROW] >= first].sort_values(S.ROW)
    layer = LayeredPreviews(below, first, held(new))
    return frame.drop(columns=[c for c in (*S.READ_BY_ROW, S.KEY) if c in frame.columns]), layer


def held(frame: pd.DataFrame) -> HeldPreviews:
    """The READ_BY_ROW columns of a frame that still has them, held in memory."""
    return HeldPreviews(pa.Table.from_pandas(frame[list(S.READ_BY_ROW)], preserve_index=False))


def without_texts(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame, its rows numbered in S.ROW, without the READ_BY_ROW columns and keys."""
    out = frame.drop(columns=[c for c in (*S.READ_BY_ROW, S.KEY) if c in frame.columns])
    with warnings.catch_warnings():  # a block a column (table.combine): no copy to add one
        warnings.simplefilter("ignore", pd.errors.PerformanceWarning)
        out[S.ROW] = np.arange(len(out), dtype=np.int64)
    return out


def with_texts(rows: pd.DataFrame, previews: Previews,
               columns: tuple[str, ...] = S.READ_BY_ROW, keys: bool = True) -> pd.DataFrame:
    """rows with these READ_BY_ROW columns (read by S.ROW; a whole-run view that needs one
    reads only that one: the prompt of each prompt, not every text of rows all over the
    file), and (keys) each row's KEY."""
    missing = [c for c in columns if c not in rows.columns]
    keys = keys and S.KEY not in rows.columns
    if not missing and not keys:
        return rows
    out = rows.copy()
    if keys:
        out[S.KEY] = sample_keys(out)
    if missing:
        read = previews.take(rows[S.ROW].to_numpy(), tuple(missing))
        for name in missing:
            values = read.column(name).to_pandas().set_axis(rows.index)
            out[name] = values.astype(S.SUMMARY_DTYPES[name]) if S.SUMMARY_DTYPES[name] in (
                "string", "float64") else values
    return out


def sample_keys(frame: pd.DataFrame) -> pd.Series:
    """schema.sample_key for every row, vectorised."""
    base = frame[S.FILE].astype("string") + ":" + frame[S.LINE].astype("string")
    item = frame[S.ITEM]
    return base.where(item == 0, base + "#" + item.astype("string")).astype("string")


def served(frame: pd.DataFrame, previews: Previews | None) -> tuple[pd.DataFrame, Previews]:
    """The frame a run serves (rows numbered, no preview columns) and where its previews are
    read: `previews` when given (the file the frame was written to or read from), else the
    frame's own, held in memory."""
    if S.ROW in frame.columns and previews is not None:
        return frame, previews
    return without_texts(frame), previews if previews is not None else held(frame)


def stored_frame(frame: pd.DataFrame, previews: Previews | None) -> pd.DataFrame:
    """The frame as the index file holds it: every READ_BY_ROW column, no S.ROW nor KEY."""
    if previews is not None and S.ROW in frame.columns:
        frame = with_texts(frame, previews)
    return frame.drop(columns=[S.ROW, S.KEY], errors="ignore")
