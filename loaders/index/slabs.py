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

import numpy as np
import pyarrow as pa

PAGE = mmap.PAGESIZE
# (column, field, its slabs as (offset, bytes)): a number column's values, or a text
# column's offsets (from 0) and then its data
Layout = list[tuple[int, pa.Field, tuple[tuple[int, int], ...]]]


def slab_fields(table: pa.Table) -> list[int]:
    """The columns a part writes as slabs: fixed-width numbers of whole bytes, and text or
    binary with 32-bit offsets, without nulls."""
    return [at for at, field in enumerate(table.schema)
            if slab_type(field.type) and not table.column(at).null_count]


def slab_type(kind: pa.DataType) -> bool:
    """Fixed-width numbers of whole bytes (not flags: bits), or text with 32-bit offsets."""
    return ((pa.types.is_integer(kind) or pa.types.is_floating(kind)) and kind.bit_width >= 8
            ) or is_text(kind)


def is_text(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_binary(kind)


def write_slabs(fd: int, table: pa.Table, columns: list[int], start: int) -> Layout:
    """Each column's buffers, each at the next page boundary from `start` on, in the file
    `fd` (which then ends at a page boundary)."""
    layout: Layout = []
    at = _page_up(start)
    for column in columns:
        slabs = []
        for values in _buffers(table.column(column).combine_chunks()):
            os.pwrite(fd, values, at)
            slabs.append((at, len(values)))
            at = _page_up(at + len(values))
        layout.append((column, table.schema.field(column), tuple(slabs)))
    os.ftruncate(fd, max(at, start))
    return layout


def _buffers(array: pa.Array) -> tuple[pa.Buffer | bytes, ...]:
    """The array's values as a slab holds them (a text's offsets from 0)."""
    if is_text(array.type):
        _, raw, data = array.buffers()
        offsets = np.frombuffer(raw, np.int32)[array.offset:array.offset + len(array) + 1] if (
            raw is not None and len(array)) else np.zeros(1, np.int32)
        first = int(offsets[0])
        return ((offsets - first).tobytes(),
                b"" if data is None else data.slice(first, int(offsets[-1]) - first))
    width = array.type.bit_width // 8
    return (array.buffers()[1].slice(array.offset * width, len(array) * width),)


def _page_up(size: int) -> int:
    return -(-size // PAGE) * PAGE


def read_slabs(whole: pa.Buffer, layout: Layout, rows: int) -> list[tuple[int, pa.Field, pa.Array]]:
    """The slab columns of a part mapped at `whole`, read where they lie."""
    return [(column, field, pa.Array.from_buffers(field.type, rows, [None, *(
        whole.slice(offset, size) for offset, size in slabs)]))
            for column, field, slabs in layout]


def slab_sizes(layout: Layout, whole: pa.Buffer) -> dict[int, int]:
    """Each slab's address and its whole pages' size, as _Maps remembers them."""
    return {whole.address + offset: _page_up(size) for _, _, slabs in layout
            for offset, size in slabs if size}  # an empty one starts where the next does
