"""Scanning and reading Parquet dumps (TRL's completions), one sample per row."""
from __future__ import annotations

from loaders.formats import BY_NAME, read_records
from loaders.formats.context import context_of
from loaders.index.chunk import Chunk, ChunkResult
from loaders.index.scan_jsonl import add_record
from loaders.index.summary import SummaryBatch, where_of
from loaders.parse.record import record_check


def scan_parquet(chunk: Chunk, batch: SummaryBatch) -> ChunkResult:
    """Every row of the file into the batch; line is the 1-based row number, offset the row
    index.  The result holds everything but the rows, which the batch collects."""
    if chunk.format == "board_parquet":  # the board's own layout: by row group, numpy views
        from loaders.index.scan_board import scan_board

        return scan_board(chunk, batch)
    result = ChunkResult(chunk, parsed_until=chunk.end)
    context = context_of(chunk.rel, chunk.rank)
    try:
        # Parquet rows, or a reader's records
        records = read_records(chunk.format, chunk.path, chunk.rel)
    except (OSError, ValueError) as err:
        kind = "Parquet file" if BY_NAME[chunk.format].reader is None else "file"
        result.problems.append((0, f"unreadable {kind}: {err}", True))
        return result
    for index, record in enumerate(records):
        where = where_of(chunk.rel, index + 1, chunk.rank, index, 0, record_check(record))
        add_record(batch, record, where, result, chunk.format, context)
    result.lines = len(records)
    return result
