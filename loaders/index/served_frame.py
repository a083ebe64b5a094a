"""A first index's run made as a run serves it: its frame numbered by S.ROW without the
columns read by row (schema.READ_BY_ROW), which stay the Arrow columns the sort made.

Made as a whole frame, a million samples' texts and token digests became pandas columns
(each digest a Python bytes), went back to Arrow to be held or written, and were dropped
from the frame: 0.1-0.2 s of the long run's cold index.  Here the prompts stay coded (a
dataset's prompts repeat: HeldPreviews decodes the rows read), the digests stay Arrow
binary, and the index file is the frame's numbers beside these columns (index_table).
The conversation's columns go through the frame as before: truncation reads them.
"""
from __future__ import annotations

import functools
import json
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa

from loaders import schema as S
from loaders.index.parts import Part
from loaders.index.previews import HeldPreviews
from loaders.index.table import DECODED, FILLS, empty_frame, framed, sorted_table
from loaders.index.unmapper import Unmapper

# left in Arrow: the conversation's columns are read by truncated() on the way
APART = (*S.TEXT_PREVIEWS, *S.LINE_PLACE, S.TOKEN_DIGEST)
_KINDS = {"string": pa.large_string(), "int64": pa.int64(), "object": pa.binary()}


def combine_served(parts: list[Part | pd.DataFrame]) -> tuple[pd.DataFrame, HeldPreviews]:
    """table.combine's run as previews.served makes it of that frame (without_texts and
    held): the frame without the READ_BY_ROW columns, numbered by S.ROW, and those columns
    held.  Empties `parts`."""
    with Unmapper() as unmapper:  # the parts' maps go beside the frame's making
        table = sorted_table(parts, DECODED.difference(APART))
        unmapper.start()
        return _served(table)


def _served(table: pa.Table | None) -> tuple[pd.DataFrame, HeldPreviews]:
    if table is None:
        frame = empty_frame()
        return _numbered(frame.drop(columns=list(S.READ_BY_ROW))), HeldPreviews(
            pa.Table.from_pandas(frame[list(S.READ_BY_ROW)], preserve_index=False))
    apart = {name: _column(table, name) for name in APART}
    frame = framed(table.drop_columns([n for n in APART if n in table.column_names]),
                   frozenset(APART))
    held = pa.Table.from_pandas(frame[list(S.CONVERSATION_COLUMNS)], preserve_index=False)
    for name in S.CONVERSATION_COLUMNS:
        apart[name] = held.column(name)
    frame = frame.drop(columns=list(S.CONVERSATION_COLUMNS))
    return _numbered(frame), HeldPreviews(pa.table(apart))


def _column(table: pa.Table, name: str) -> pa.ChunkedArray:
    """A READ_BY_ROW column as typed() has it: a missing one filled (no text, offset 0, no
    digest), text of 64-bit offsets (pandas'), coded text left coded."""
    dtype = S.SUMMARY_DTYPES[name]
    kind = _KINDS[dtype]
    if name not in table.column_names:
        return pa.chunked_array([pa.repeat(pa.scalar(FILLS[dtype], kind), table.num_rows)])
    column = table.column(name)
    if pa.types.is_dictionary(column.type) or column.type == kind:
        return column
    return column.cast(kind)


def _numbered(frame: pd.DataFrame) -> pd.DataFrame:
    with warnings.catch_warnings():  # a block a column (table.framed): no copy to add one
        warnings.simplefilter("ignore", pd.errors.PerformanceWarning)
        frame[S.ROW] = np.arange(len(frame), dtype=np.int64)
    return frame


def index_table(frame: pd.DataFrame, previews: HeldPreviews) -> pa.Table | None:
    """The index file's table of a run made by combine_served (its frame numbered 0, 1, ...
    and its previews held): the frame's columns, then the previews' as the whole frame's
    would be written (text decoded, with pandas' metadata for them); None for any other."""
    rows = frame[S.ROW].to_numpy() if S.ROW in frame.columns else None
    if rows is None or previews.num_rows != len(frame) or not np.array_equal(
            rows, np.arange(len(frame))):
        return None
    table = pa.Table.from_pandas(frame.drop(columns=[S.ROW, S.KEY], errors="ignore"),
                                 preserve_index=False)
    for name, column in zip(S.READ_BY_ROW, previews.columns()):
        table = table.append_column(name, column)
    return table.replace_schema_metadata(_pandas_metadata(table.schema.metadata))


def _pandas_metadata(metadata: dict[bytes, bytes] | None) -> dict[bytes, bytes]:
    """The table's pandas metadata with the READ_BY_ROW columns' entries, as typed() types
    them (a frame of no rows gives them)."""
    meta = json.loads((metadata or {})[b"pandas"])
    meta["columns"] += _read_by_row_entries()
    return {**(metadata or {}), b"pandas": json.dumps(meta).encode()}


@functools.cache
def _read_by_row_entries() -> list[dict]:
    typed = pa.Table.from_pandas(pd.DataFrame({name: pd.Series([], dtype=S.SUMMARY_DTYPES[
        name]) for name in S.READ_BY_ROW}), preserve_index=False)
    entries = json.loads(typed.schema.metadata[b"pandas"])["columns"]
    for entry in entries:
        if S.SUMMARY_DTYPES[entry["name"]] == "object":  # what rows of bytes say
            entry["pandas_type"] = "bytes"
    return entries
