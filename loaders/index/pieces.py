"""A worker task's rows in its chunks' order: batches of parsed samples, and a Parquet dump's
stored summaries where they are used (loaders.index.stored_summary), made one table or one set
of columns for the main process (loaders.index.pool)."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from loaders.index.chunk import Chunk, ChunkResult, Columns, columns_of
from loaders.index.scan_jsonl import scan_jsonl
from loaders.index.summary import SummaryBatch

if TYPE_CHECKING:
    import pyarrow as pa

    from loaders.index.stored_summary import StoredRows


class Pieces:
    """A task's rows in its chunks' order: batches of parsed samples, and a Parquet dump's
    stored summaries where they are used (loaders.index.stored_summary), as Arrow tables."""

    def __init__(self) -> None:
        self.batch = SummaryBatch()
        self.tables: list[pa.Table] = []  # in order
        self.stored: list[StoredRows] = []  # stored rows after them, not yet a table
        self._dropped: dict[str, list[str]] = {}

    def scan(self, chunk: Chunk) -> ChunkResult:
        before = len(self.batch)
        if chunk.tabular:
            # imported here, not at the top: pyarrow costs every worker ~50 MB of memory and
            # most dumps are jsonl; scan_parquet imports nothing that leads back here
            from loaders.index.scan_parquet import scan_parquet

            result = scan_parquet(chunk, self.batch)
        else:
            result = scan_jsonl(chunk, self.batch)
        result.nrows = len(self.batch) - before
        if result.rows is not None:  # stored rows: after the batch's, which go first
            if len(self.batch):
                self._batch_table()
            self.stored.append(result.rows)
            result.nrows, result.rows = result.rows.table.num_rows, None
        return result

    def rows(self) -> tuple[Columns | pa.Table, dict[str, list[str]]]:
        if not self.stored and not self.tables:
            columns, dropped = columns_of(self.batch.finish())
            if "pyarrow" not in sys.modules:  # a fork server's worker: left to the caller
                return columns, dropped
            from loaders.index.arrow_part import table_of

            # a forked worker has Arrow at hand: a table here costs the caller nothing
            # (1 us a row in one process on a million-row run), and pickles 3x faster
            return table_of(columns), dropped
        from loaders.index.arrow_part import concatenated

        self._batch_table()
        # a chunk a column: a table of many small chunks pickles ~8x slower to the caller
        return concatenated(self.tables).combine_chunks(), self._dropped

    def _batch_table(self) -> None:
        """The stored rows so far, then the batch's samples, as tables; a new batch."""
        from loaders.index.arrow_part import table_of
        from loaders.index.stored_summary import located

        if self.stored:
            self.tables.append(located(self.stored))
            self.stored = []
        if len(self.batch):
            columns, dropped = columns_of(self.batch.finish())
            for file, names in dropped.items():
                self._dropped.setdefault(file, []).extend(names)
            self.batch = SummaryBatch()
            self.tables.append(table_of(columns))
