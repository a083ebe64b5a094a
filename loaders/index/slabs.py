"""A part's columns of numbers and of text in whole pages of their own (slabs), for a sort
that writes each such column back into the pages its parts' rows held (in_place.py).

Why: on a VM under nested paging (this benchmark machine) a page costs 4-13 us the first
time a process writes it, a page another process already wrote 0.4 us to map.  The long
run's sort copied its 520 MB of parts into fresh pages: 151,000 faults, 0.66-0.75 s of the
1.0-1.2 s after the scan.  Here a worker writes each column of fixed-width numbers, or of
text with 32-bit offsets (its offsets from 0, then its data), without nulls, after its
part's IPC file, each buffer at a page boundary (shared_part.py).  The main process's sort
maps a column's slabs end to end (kernel.alias: the same pages, no copy), reads the chunks
through that map into a scratch buffer of its thread and copies the scratch back; once
every column is taken, the parts' files let go of all but those slabs.  The run is held
once.
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
    `fd` (which then ends at a page boundary): a few writes for the part, not one a
    buffer (each write costs its own ~5 us; 2 ms a part of the long run one by one)."""
    layout: Layout = []
    pieces: list[pa.Buffer | bytes] = []
    at = first = page_up(start)
    for column in columns:
        slabs = []
        for values in _buffers(_whole(table.column(column))):
            slabs.append((at, len(values)))
            end, at = at + len(values), page_up(at + len(values))
            pieces.extend((values, _ZEROS[:at - end]) if at > end else (values,))
        layout.append((column, table.schema.field(column), tuple(slabs)))
    for group in range(0, len(pieces), _MOST_PIECES):
        first = _written(fd, pieces[group:group + _MOST_PIECES], first)
    os.ftruncate(fd, max(at, start))
    return layout


_ZEROS = memoryview(bytes(PAGE))  # a slab's padding to its next page
_MOST_PIECES = 512  # buffers a write (the system's limit is 1,024: IOV_MAX)


def _written(fd: int, pieces: list[pa.Buffer | bytes], at: int) -> int:
    """The pieces written end to end from `at` on (what a short write left, a piece at a
    time); where they end."""
    done = os.pwritev(fd, pieces, at)
    for piece in pieces:
        view = memoryview(piece)[min(done, len(piece)):]
        at, done = at + min(done, len(piece)), max(done - len(piece), 0)
        while len(view):
            wrote = os.pwrite(fd, view, at)
            view, at = view[wrote:], at + wrote
    return at


def _whole(column: pa.ChunkedArray) -> pa.Array:
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _buffers(array: pa.Array) -> tuple[pa.Buffer | bytes, ...]:
    """The array's values as a slab holds them (a text's offsets from 0)."""
    if is_text(array.type):
        _, raw, data = array.buffers()
        if raw is None or not len(array):
            return bytes(4), b""
        offsets = np.frombuffer(raw, np.int32)[array.offset:array.offset + len(array) + 1]
        first, last = int(offsets[0]), int(offsets[-1])
        return (raw.slice(array.offset * 4, len(offsets) * 4) if first == 0 else (
            offsets - first).tobytes(), b"" if data is None else data.slice(first, last - first))
    width = array.type.bit_width // 8
    return (array.buffers()[1].slice(array.offset * width, len(array) * width),)


def read_slabs(whole: pa.Buffer, layout: Layout, rows: int) -> list[tuple[int, pa.Field, pa.Array]]:
    """The slab columns of a part mapped at `whole`, read where they lie."""
    return [(column, field, pa.Array.from_buffers(field.type, rows, [None, *(
        whole.slice(offset, size) for offset, size in slabs)]))
            for column, field, slabs in layout]


def slab_sizes(layout: Layout, whole: pa.Buffer) -> dict[int, int]:
    """Each slab's address and bytes, as _Maps remembers them (an empty one starts where the
    next one does: not one)."""
    return {whole.address + offset: size for _, _, slabs in layout for offset, size in slabs
            if size}


def page_up(size: int) -> int:
    """The size of the whole pages that hold `size` bytes."""
    return -(-size // PAGE) * PAGE
