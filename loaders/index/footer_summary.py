"""The summary a board Parquet file's footer holds, made where the file is written.

The writer (loaders/writer/parquet.py) calls summary_blob on the table it is about to write:
the index's own scan of those rows (scan_board.add_table into a SummaryBatch), exactly what a
cold index would run over the rows read back; loaders.index.stored_summary reads it.
"""
from __future__ import annotations

import orjson
import pyarrow as pa

from loaders.find.walk import rank_of
from loaders.index.arrow_part import table_of
from loaders.index.chunk import Chunk, ChunkResult, columns_of
from loaders.index.scan_board import add_table
from loaders.index.stored_summary import FACTS, LOCATED, packed, summary_facts
from loaders.index.summary import SummaryBatch


def summary_blob(table: pa.Table, name: str) -> bytes | None:
    """The summary of a file's rows (`name`: the file's name) as the footer stores it; None
    when the rows are not all plain samples (the index then reads them as it always has)."""
    rank = rank_of(name)
    chunk = Chunk(name, name, rank, 0, 0, format="board_parquet")
    batch, result = SummaryBatch(), ChunkResult(chunk)
    add_table(table, 0, chunk, result, batch)
    columns, dropped = columns_of(batch.finish())  # a sample's problems come with its batch
    if result.problems or dropped or len(batch) != table.num_rows:
        return None
    part = table_of(columns).drop_columns(list(LOCATED))
    part = part.cast(pa.schema([f.with_type(f.type.value_type) if pa.types.is_dictionary(
        f.type) else f for f in part.schema]))  # plain texts: one batch to read, LZ4 packs
    part = part.replace_schema_metadata({FACTS: orjson.dumps(summary_facts(name, rank))})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, part.schema) as stream:  # plain buffers: see stored_summary
        stream.write_table(part)
    return packed(sink.getvalue().to_pybytes())
