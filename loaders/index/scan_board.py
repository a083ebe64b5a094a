"""Scanning the board's own Parquet dumps into summary rows, a row group at a time.

Rows come as records whose token columns are numpy views (loaders/parse/columnar.py), so the
per-sample statistics (lengths, KL, value mean, token-reward sum, the token digest) are numpy
work over float arrays: no JSON and no Python float per token.  A row is a sample: its
line is the 1-based row number in the file, its offset the row index.
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from loaders import schema as S
from loaders.find.remote import open_binary
from loaders.formats import samples_of
from loaders.formats.context import FileContext, context_of
from loaders.index.chunk import Chunk, ChunkResult
from loaders.index.summary import SummaryBatch
from loaders.parse.columnar import dictionary_columns, json_columns, records, row_checks
from loaders.parse.record import BadLine

_ERRORS = (OSError, ValueError, pa.ArrowException)


def scan_board(chunk: Chunk, batch: SummaryBatch) -> ChunkResult:
    """Every row of the file into the batch; a row group that cannot be read is one
    problem (its rows counted as bad lines), the others are kept."""
    result = ChunkResult(chunk, parsed_until=chunk.end)
    try:
        source = open_binary(chunk.path)
        meta = pq.ParquetFile(source).metadata  # then token texts read as dictionaries:
        handle = pq.ParquetFile(source, metadata=meta, read_dictionary=dictionary_columns(
            meta.schema.to_arrow_schema()))
    except _ERRORS as err:
        result.problems.append((0, f"unreadable Parquet file: {_short(err)}", True))
        return result
    context = context_of(chunk.rel, chunk.rank)
    as_json = json_columns(handle.schema_arrow)
    row = 0
    for group in range(handle.num_row_groups):
        size = handle.metadata.row_group(group).num_rows
        try:
            table = handle.read_row_group(group, use_threads=False)  # a worker per core already
            checks = row_checks(table)
            found = records(table, as_json)
        except _ERRORS as err:
            result.problems.extend((row + i + 1, f"unreadable row group {group}: "
                                    f"{_short(err)}", True) for i in range(size))
            row += size
            continue
        for i, (record, check) in enumerate(zip(found, checks)):
            where = {S.FILE: chunk.rel, S.LINE: row + i + 1, S.RANK: chunk.rank,
                     S.OFFSET: row + i, S.NBYTES: 0, S.LINE_CHECK: check}
            _add(batch, record, where, result, chunk.format, context)
        row += size
    result.lines = row
    return result


def _add(batch: SummaryBatch, record: dict, where: dict, result: ChunkResult, fmt: str,
         context: FileContext) -> None:
    line = where[S.LINE]
    for item, sample in enumerate(samples_of(record, fmt, context)):
        if isinstance(sample, BadLine):
            result.problems.append((line, str(sample), True))
            continue
        batch.add(sample, {**where, S.ITEM: item},
                  lambda reason: result.problems.append((line, reason, False)))


def _short(err: Exception) -> str:
    return " ".join(str(err).split())[:160]
