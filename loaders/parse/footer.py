"""A Parquet file's footer, read and held to loaders/limits.py before any row is decoded.

The footer says how many rows each row group has and how many bytes its column chunks take
once decompressed; Arrow allocates what it says.  A few kilobytes can claim 3e9 rows, 20 M
rows of one dictionary value or a 1 GiB text cell, so every reader of a dump's Parquet file
gets its footer here, checked: O(row groups x columns), never a loop over rows.
"""
from __future__ import annotations

from typing import BinaryIO

import pyarrow.parquet as pq

from loaders import limits
from loaders.limits import OverBudget

# rows any file may claim whatever its size: a tiny file of a few empty rows is no bomb
_ROWS_FREE = 1024


def checked_metadata(source: BinaryIO) -> pq.FileMetaData:
    """The footer of an open Parquet file, once its claims are within budget; else
    OverBudget (a ValueError).  Leaves the file's position where it was."""
    meta = pq.ParquetFile(source).metadata
    check_footer(meta, _size(source))
    return meta


def check_footer(meta: pq.FileMetaData, file_bytes: int) -> None:
    """OverBudget when the footer claims more rows or decoded bytes than the budgets allow."""
    if meta.num_rows > limits.MAX_PARQUET_ROWS:
        raise OverBudget("Parquet rows", meta.num_rows, limits.MAX_PARQUET_ROWS)
    allowed = limits.MAX_ROWS_PER_BYTE * file_bytes + _ROWS_FREE
    if meta.num_rows > allowed:  # rows a real file would need more bytes to hold
        raise OverBudget(f"Parquet rows for a file of {file_bytes:,} bytes", meta.num_rows,
                         allowed)
    for index in range(meta.num_row_groups):
        group = meta.row_group(index)
        if group.num_rows > limits.MAX_ROW_GROUP_ROWS:
            raise OverBudget(f"rows in row group {index}", group.num_rows,
                             limits.MAX_ROW_GROUP_ROWS)
        decoded = max(group.total_byte_size, sum(
            group.column(c).total_uncompressed_size for c in range(group.num_columns)))
        if decoded > limits.MAX_ROW_GROUP_BYTES:
            raise OverBudget(f"decoded bytes of row group {index}", decoded,
                             limits.MAX_ROW_GROUP_BYTES)


def _size(source: BinaryIO) -> int:
    here = source.tell()
    end = source.seek(0, 2)
    source.seek(here)
    return end
