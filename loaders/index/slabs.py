"""A part's number columns in whole pages of their own (slabs), and a sort that writes each
such column back into the pages its parts' rows held.

Why: on a VM under nested paging (this benchmark machine) a page costs 4-13 us
the first time a process writes it, a page another process already wrote 0.4 us to map.
The long run's sort copied its 520 MB of parts into fresh pages: 150,000 faults, 0.45 s of
the 1.0 s after the scan.  Here a worker writes each column of fixed-width numbers without
nulls after its part's IPC file, at a page boundary (shared_part.py); the main process's
sort gathers such a column into a scratch buffer of its thread (faulted in once, for every
column), maps the column's slabs end to end (kernel.alias: the same pages, no copy) and
copies the scratch there.  The sorted column lives in its parts' pages: nothing of it is
handed back, and the run is still held once.
"""
from __future__ import annotations

import mmap
import os

import pyarrow as pa

PAGE = mmap.PAGESIZE
Layout = list[tuple[int, pa.Field, int, int]]  # (column, field, offset, bytes) a slab


def slab_fields(table: pa.Table) -> list[int]:
    """The columns a part writes as slabs: fixed-width numbers of whole bytes, no nulls."""
    return [at for at, field in enumerate(table.schema)
            if slab_type(field.type) and not table.column(at).null_count]


def slab_type(kind: pa.DataType) -> bool:
    """Fixed-width numbers of whole bytes (not flags: bits)."""
    return (pa.types.is_integer(kind) or pa.types.is_floating(kind)) and kind.bit_width >= 8


def write_slabs(fd: int, table: pa.Table, columns: list[int], start: int) -> Layout:
    """Each column's values at the next page boundary from `start` on, in the file `fd`
    (which then ends at a page boundary)."""
    layout: Layout = []
    at = _page_up(start)
    for column in columns:
        values = _values(table.column(column).combine_chunks())
        os.pwrite(fd, values, at)
        layout.append((column, table.schema.field(column), at, values.size))
        at = _page_up(at + values.size)
    os.ftruncate(fd, max(at, start))
    return layout


def _values(array: pa.Array) -> pa.Buffer:
    width = array.type.bit_width // 8
    return array.buffers()[1].slice(array.offset * width, len(array) * width)


def _page_up(size: int) -> int:
    return -(-size // PAGE) * PAGE


def read_slabs(whole: pa.Buffer, layout: Layout, rows: int) -> list[tuple[int, pa.Field, pa.Array]]:
    """The slab columns of a part mapped at `whole`, read where they lie."""
    return [(column, field, pa.Array.from_buffers(field.type, rows,
                                                  [None, whole.slice(offset, size)]))
            for column, field, offset, size in layout]


def slab_sizes(layout: Layout, whole: pa.Buffer) -> dict[int, int]:
    """Each slab's address and its whole pages' size, as _Maps remembers them."""
    return {whole.address + offset: _page_up(size) for _, _, offset, size in layout}
