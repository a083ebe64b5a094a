"""Scanning the board's own Parquet dumps into summary rows, a row group at a time.

Rows come as records whose token columns are numpy views (loaders/parse/columnar.py), so the
per-sample statistics (lengths, KL, value mean, token-reward sum, the token digest) are numpy
work over float arrays: no JSON and no Python float per token.  A row is a sample: its
line is the 1-based row number in the file, its offset the row index.
"""
from __future__ import annotations

from typing import BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from loaders.find.remote import open_binary
from loaders.formats.context import context_of
from loaders.index.chunk import Chunk, ChunkResult
from loaders.index.hashes import content_hashes, data_hashes
from loaders.index.scan_jsonl import add_record
from loaders.index.stored_summary import holds_summary, stored_rows
from loaders.index.summary import SummaryBatch, where_of
from loaders.parse.columnar import (
    dictionary_columns,
    json_columns,
    records,
    row_checks,
    token_text_columns,
)
from loaders.parse.footer import check_footer, footer_rows_checked, opened, read_checked

_ERRORS = (OSError, ValueError, pa.ArrowException)


def plan_row_groups(path: str, rel: str, rank: int, size: int, target: int) -> list[Chunk]:
    """Chunks of whole row groups, about `target` bytes each (a Ray task or pool task each):
    a chunk runs from where its first row group starts to where the next chunk's does, the
    first from 0, the last to the file's end.  A footer that cannot be read gives one chunk,
    whose scan then names the problem; so does one that stores the file's summary (read
    whole, as the writer made it: the row path then reads it a slice at a time)."""
    if size <= target:  # one chunk whatever its row groups: no footer to read
        return [Chunk(path, rel, rank, 0, size, False, "board_parquet")]
    try:
        meta = pq.ParquetFile(open_binary(path)).metadata
        if holds_summary(meta.metadata):  # one chunk: the file's summary is one table, and
            return [Chunk(path, rel, rank, 0, size, False, "board_parquet")]  # one digest
        starts = [_start(meta.row_group(g)) for g in range(meta.num_row_groups)]
    except _ERRORS:
        starts = []
    bounds = [0]
    for start in starts[1:]:
        if start - bounds[-1] >= target:
            bounds.append(start)
    return [Chunk(path, rel, rank, a, b, False, "board_parquet")
            for a, b in zip(bounds, [*bounds[1:], size])]


def _start(group: pq.RowGroupMetaData) -> int:
    """The byte offset where a row group's first page starts."""
    pages = [group.column(c) for c in range(group.num_columns)]
    return min(p.dictionary_page_offset if p.has_dictionary_page else p.data_page_offset
               for p in pages)


def scan_board(chunk: Chunk, batch: SummaryBatch) -> ChunkResult:
    """The rows of the chunk's row groups into the batch (lines relative to the chunk's first
    row, offsets the row index in the file); a row group that cannot be read is one problem
    (its rows counted as bad lines), the others are kept.  A file whose footer stores its
    summary (stored_summary) gives those rows as result.rows, an Arrow table, instead."""
    result = ChunkResult(chunk, parsed_until=chunk.end)
    try:
        source, size = _opened(chunk, result)
        meta = footer_rows_checked(source)  # its rows within budget
        groups = _groups_of(chunk, meta)
        if groups and _read_stored(meta, groups, chunk, result):
            return result
        check_footer(meta, size)  # the row groups' claims too, before one is decoded;
        # token texts, and every text a dictionary holds, as dictionaries
        handle = opened(source, dictionary_columns, meta)
    except _ERRORS as err:
        result.problems.append((0, f"unreadable Parquet file: {_short(err)}", True))
        return result
    for part in _slices(meta, groups):  # a whole file's chunk (a stored summary's) too
        if not _scan_groups(handle, part, chunk, result, batch):
            for group, first in part:  # one is unreadable: each alone, to keep the rest
                _scan_group(handle, group, first, chunk, result, batch)
    return result


SLICE_BYTES = 64 << 20  # decoded bytes of row groups read at once


def _slices(meta: pq.FileMetaData, groups: list[tuple[int, int]]
            ) -> list[list[tuple[int, int]]]:
    """The chunk's row groups in runs of about SLICE_BYTES decoded, each read at once (a
    read a group costs more than decoding a few samples; a read of a 1 GB file's would hold
    all of it)."""
    out: list[list[tuple[int, int]]] = []
    size = SLICE_BYTES
    for group in groups:
        decoded = meta.row_group(group[0]).total_byte_size
        if size + decoded > SLICE_BYTES and (not out or out[-1]):
            out.append([])
            size = 0
        out[-1].append(group)
        size += decoded
    return out


def _opened(chunk: Chunk, result: ChunkResult) -> tuple[BinaryIO | pa.BufferReader, int]:
    """The chunk's file and its size, and its hashes when the chunk is its last (here in a
    worker, not after in the main process): a small file read whole, once, for both."""
    source = open_binary(chunk.path)
    size = source.seek(0, 2)
    source.seek(0)
    if chunk.end != size:
        return source, size
    if size > WHOLE_FILE_BYTES:
        result.hashes = content_hashes(chunk.path, size)
        return source, size
    data = source.read()
    result.hashes = data_hashes(data, size)
    return pa.BufferReader(data), size


WHOLE_FILE_BYTES = 4 << 20  # a step's file of 1,024 samples of ~500 tokens


def _read_stored(meta: pq.FileMetaData, groups: list[tuple[int, int]], chunk: Chunk,
                 result: ChunkResult) -> bool:
    """The chunk's rows from the summary its footer stores; False when it stores none this
    board may use."""
    count = sum(meta.row_group(group).num_rows for group, _ in groups)
    rows = stored_rows(meta.metadata, meta.num_rows, chunk, groups[0][1], count)
    if rows is None:
        return False
    result.rows, result.lines = rows, count  # a StoredRows
    return True


def add_table(table: pa.Table, first: int, chunk: Chunk, result: ChunkResult,
              batch: SummaryBatch) -> None:
    """Rows read (the file's rows from `first` on) into the batch, after result.lines.
    Raises what reading a cell raises (an Arrow error, a ValueError)."""
    _add_rows(records(table, json_columns(table.schema)), row_checks(table), first, chunk,
              result, batch)


def _scan_groups(handle: pq.ParquetFile, groups: list[tuple[int, int]], chunk: Chunk,
                 result: ChunkResult, batch: SummaryBatch) -> bool:
    """All the chunk's row groups in one read (a read a group costs more than decoding a
    few samples); False, with nothing added, when one of them cannot be read."""
    try:
        table = read_checked(handle, [group for group, _ in groups],
                             token_text_columns(handle.schema_arrow))
        checks = row_checks(table)
        found = records(table, json_columns(handle.schema_arrow))  # the cast table has no
        # metadata
    except _ERRORS:
        return False
    _add_rows(found, checks, groups[0][1], chunk, result, batch)
    return True


def _groups_of(chunk: Chunk, meta: pq.FileMetaData) -> list[tuple[int, int]]:
    """(row group, its first row's index in the file) of each row group in the chunk."""
    out, row = [], 0
    for group in range(meta.num_row_groups):
        if chunk.start <= _start(meta.row_group(group)) < chunk.end:
            out.append((group, row))
        row += meta.row_group(group).num_rows
    return out


def _scan_group(handle: pq.ParquetFile, group: int, first: int, chunk: Chunk,
                result: ChunkResult, batch: SummaryBatch) -> None:
    try:
        # one thread: a worker per core already
        table = read_checked(handle, [group], token_text_columns(handle.schema_arrow))
        checks = row_checks(table)
        found = records(table, json_columns(handle.schema_arrow))
    except _ERRORS as err:
        size = handle.metadata.row_group(group).num_rows
        result.problems.extend((result.lines + i + 1, f"unreadable row group {group}: "
                                f"{_short(err)}", True) for i in range(size))
        result.lines += size
        return
    _add_rows(found, checks, first, chunk, result, batch)


def _add_rows(found: list[dict], checks: list[int], first: int, chunk: Chunk,
              result: ChunkResult, batch: SummaryBatch) -> None:
    """Rows read (the file's rows from `first` on) into the batch, after result.lines."""
    line = result.lines
    result.lines += len(found)
    context = context_of(chunk.rel, chunk.rank)
    for i, (record, check) in enumerate(zip(found, checks)):
        where = where_of(chunk.rel, line + i + 1, chunk.rank, first + i, 0, check)
        add_record(batch, record, where, result, chunk.format, context)


def _short(err: Exception) -> str:
    return " ".join(str(err).split())[:160]
