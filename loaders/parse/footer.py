"""A Parquet file's footer, read and held to loaders/limits.py before any row is decoded.

The footer says how many rows each row group has and how many bytes its column chunks take
once decompressed; Arrow allocates what it says.  A few kilobytes can claim 3e9 rows, 20 M
rows of one dictionary value or a 1 GiB text cell, so every reader of a dump's Parquet file
gets its footer here, checked: O(row groups x columns), never a loop over rows.

What the footer cannot say is what a dictionary-encoded text column becomes once decoded: a
100 KB dictionary value repeated on a million rows is 100 GB of text from a few hundred KB of
pages.  So such columns are read as dictionaries (indices and the distinct values: no bigger
than the pages), their decoded size is counted with Arrow compute, and only then are they
decoded (read_checked): the rows' text is never made past the budget.
"""
from __future__ import annotations

from collections.abc import Callable, Collection
from typing import BinaryIO

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyarrow._parquet import ParquetReader

from loaders import limits
from loaders.limits import OverBudget

# rows any file may claim whatever its size: a tiny file of a few empty rows is no bomb
_ROWS_FREE = 1024


def checked_metadata(source: BinaryIO) -> pq.FileMetaData:
    """The footer of an open Parquet file, once its claims are within budget; else
    OverBudget (a ValueError).  Leaves the file's position where it was."""
    meta = footer_rows_checked(source)
    check_footer(meta, _size(source))
    return meta


def footer_rows_checked(source: BinaryIO) -> pq.FileMetaData:
    """The footer, once the rows it claims for the file are within budget: what a reader
    that decodes no row group needs (a stored summary's, whose rows must match).  Read by
    the bare reader: ParquetFile would also build the schema's paths."""
    reader = ParquetReader()
    reader.open(source)
    meta = reader.metadata
    check_rows(meta, _size(source))
    return meta


def check_rows(meta: pq.FileMetaData, file_bytes: int) -> None:
    """OverBudget when the footer claims more rows than the budgets allow."""
    if meta.num_rows > limits.MAX_PARQUET_ROWS:
        raise OverBudget("Parquet rows", meta.num_rows, limits.MAX_PARQUET_ROWS)
    allowed = limits.MAX_ROWS_PER_BYTE * file_bytes + _ROWS_FREE
    if meta.num_rows > allowed:  # rows a real file would need more bytes to hold
        raise OverBudget(f"Parquet rows for a file of {file_bytes:,} bytes", meta.num_rows,
                         allowed)


def check_footer(meta: pq.FileMetaData, file_bytes: int) -> None:
    """OverBudget when the footer claims more rows or decoded bytes than the budgets allow."""
    check_rows(meta, file_bytes)
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


def dictionary_text_leaves(meta: pq.FileMetaData) -> list[str]:
    """Leaf paths of the text columns whose chunks use a dictionary in some row group."""
    found = {column.path_in_schema for group in range(meta.num_row_groups)
             for column in map(meta.row_group(group).column,
                               range(meta.row_group(group).num_columns))
             if column.physical_type == "BYTE_ARRAY"
             and any("DICTIONARY" in encoding for encoding in column.encodings)}
    return sorted(found)


def opened(source: BinaryIO, also: Callable[[pa.Schema], list[str]] = lambda schema: [],
           meta: pq.FileMetaData | None = None) -> pq.ParquetFile:
    """An open Parquet file whose footer is within budget (else OverBudget), its dictionary
    text columns read as dictionaries (see read_checked), and the leaves `also` names for its
    schema (token texts, which their reader takes as dictionaries).  `meta`: its footer,
    already read by checked_metadata."""
    meta = meta or checked_metadata(source)
    leaves = {*dictionary_text_leaves(meta), *also(meta.schema.to_arrow_schema())}
    return pq.ParquetFile(source, metadata=meta, read_dictionary=sorted(leaves))


def read_checked(handle: pq.ParquetFile, groups: list[int] | None = None,
                 keep: Collection[str] = ()) -> pa.Table:
    """These row groups (all by default) of an `opened` file, once the text their
    dictionaries decode to is within MAX_ROW_GROUP_BYTES a row group (else OverBudget);
    decoded but for the columns named in `keep` (whose readers take dictionaries)."""
    groups = list(range(handle.metadata.num_row_groups)) if groups is None else groups
    table = handle.read_row_groups(groups, use_threads=False)
    allowed = limits.MAX_ROW_GROUP_BYTES * max(len(groups), 1)
    chunks = [chunk for column in table.columns for chunk in column.chunks]
    text = sum(_text_bytes(chunk, exact=False) for chunk in chunks)  # an upper bound first:
    if text > allowed:  # the exact count takes a pass over every index
        text = sum(_text_bytes(chunk, exact=True) for chunk in chunks)
    if text > allowed:
        raise OverBudget("decoded text bytes of the row groups read", text, allowed)
    return table.cast(pa.schema([field if field.name in keep else
                                 field.with_type(_decoded(field.type))
                                 for field in table.schema]))


def _text_bytes(array: pa.Array, exact: bool) -> int:
    """Bytes of text a dictionary array (or one nested in lists and structs) decodes to, or
    (not exact) an upper bound: its longest value times its rows."""
    kind = array.type
    if pa.types.is_dictionary(kind):
        if not (pa.types.is_string(kind.value_type) or pa.types.is_binary(kind.value_type)
                or pa.types.is_large_string(kind.value_type)):
            return 0
        lengths = pc.binary_length(array.dictionary)
        if not exact:
            return (pc.max(lengths).as_py() or 0) * len(array.indices)
        return int(pc.sum(pc.take(lengths, array.indices)).as_py() or 0)
    if pa.types.is_map(kind):
        return _text_bytes(array.keys, exact) + _text_bytes(array.items, exact)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _text_bytes(array.flatten(), exact)
    if pa.types.is_struct(kind):
        return sum(_text_bytes(array.field(i), exact) for i in range(kind.num_fields))
    return 0


def _decoded(kind: pa.DataType) -> pa.DataType:
    """The type with every dictionary replaced by its value type."""
    if pa.types.is_dictionary(kind):
        return kind.value_type
    if pa.types.is_map(kind):
        return pa.map_(_decoded(kind.key_type), kind.item_field.with_type(
            _decoded(kind.item_type)))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        maker = pa.list_ if pa.types.is_list(kind) else pa.large_list
        return maker(kind.value_field.with_type(_decoded(kind.value_type)))
    if pa.types.is_struct(kind):
        return pa.struct([f.with_type(_decoded(f.type)) for f in kind])
    return kind


def _size(source: BinaryIO) -> int:
    here = source.tell()
    end = source.seek(0, 2)
    source.seek(here)
    return end
