"""A worker's summary rows handed to the main process through shared memory, not the pool's
pipe.

Pickled into a pipe, an Arrow table is copied four times (into the pickle, into the pipe,
out of it, out of the pickle): on the long run's 520 MB of rows, 1.5-2 s of CPU on two cores
that parse.  Here the worker writes the table once into an anonymous memory file (memfd) as
Arrow IPC and sends only a handle to it; the main process maps the file and reads the table
where it lies (copied out, 500 MB cost it 0.55 s of a core while the workers parsed).  The
run's sort hands each column's pages back to the system as soon as it has taken the column
(hand_back), so the run is held once and a few columns, as if each part were its own.
Columns of numbers or text without nulls come after the IPC file, each buffer in pages of
its own (slabs.py), and the sort writes each such column, sorted, back into them
(in_place.py): no page of them is handed back or made afresh.

The handle is multiprocessing's own (reduction.DupFd): the worker keeps a duplicate of the
file's descriptor until the main process asks for it over a Unix socket, so a file is never
gone before it is read, and it is freed once both sides close it.
"""
from __future__ import annotations

import contextlib
import mmap
import os
import threading
import weakref
from bisect import bisect_right
from multiprocessing import reduction

import pyarrow as pa
import pyarrow.ipc as ipc

from loaders.index.slabs import read_slabs, slab_fields, slab_sizes, write_slabs


class SharedPart:
    """A table in an anonymous memory file of the process that made it (picklable)."""

    def __init__(self, table: pa.Table) -> None:
        fd = os.memfd_create("rl-board-part", os.MFD_CLOEXEC)
        try:
            slabbed = slab_fields(table)  # in pages of their own, for the sort: slabs.py
            rest = table.select(sorted(set(range(table.num_columns)).difference(slabbed)))
            with pa.output_stream(f"/proc/self/fd/{fd}") as sink, \
                    ipc.new_file(sink, rest.schema) as writer:
                writer.write_table(rest)
            self._ipc_bytes = os.fstat(fd).st_size
            self._slabs = write_slabs(fd, table, slabbed, self._ipc_bytes)
            self.rows = table.num_rows
            self._handle = reduction.DupFd(fd)  # the worker's copy, until it is asked for
        finally:
            os.close(fd)

    def table(self) -> pa.Table:
        """The table (call once), read where it is mapped but for dictionaries, which are
        copied out (a sort's take keeps a column's dictionary, and nothing else of it).  The
        map goes when the last of its columns does."""
        fd = self._handle.detach()
        try:  # shared and writable: a sort can hand its pages back (MADV_REMOVE)
            mapped = mmap.mmap(fd, os.fstat(fd).st_size)
        finally:
            os.close(fd)  # the map keeps the file
        whole = pa.py_buffer(mapped)
        _MAPS.remember(whole.address, whole.size, mapped, slab_sizes(self._slabs, whole))
        table = ipc.open_file(pa.BufferReader(whole.slice(0, self._ipc_bytes))).read_all()
        fields, columns = list(table.schema), [
            pa.chunked_array([_own(chunk) for chunk in column.chunks], column.type)
            if pa.types.is_dictionary(column.type) or pa.types.is_nested(column.type)
            else column for column in table.columns]
        for at, field, array in read_slabs(whole, self._slabs, self.rows):
            fields.insert(at, field)
            columns.insert(at, pa.chunked_array([array]))
        return pa.Table.from_arrays(columns, schema=pa.schema(fields, table.schema.metadata))


class _Maps:
    """The parts' maps by where they start, each held weakly (its columns hold it)."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._maps: list[tuple[int, weakref.ref[mmap.mmap]]] = []  # (end, map) by start
        # a slab's address: its bytes, and its map's start (the map held weakly)
        self._slabs: dict[int, tuple[int, int, weakref.ref[mmap.mmap]]] = {}
        self._lock = threading.Lock()  # the sort's takers hand back columns at once

    def remember(self, start: int, size: int, mapped: mmap.mmap,
                 slabs: dict[int, int] | None = None) -> None:
        """A part's map, and its slabs: {address: bytes}."""
        with self._lock:
            live = [(s, m) for s, m in zip(self._starts, self._maps) if m[1]() is not None]
            self._slabs = {at: kept for at, kept in self._slabs.items() if kept[2]() is not None}
            self._slabs.update((at, (size, start, weakref.ref(mapped))) for at, size in (
                slabs or {}).items())
            live.append((start, (start + size, weakref.ref(mapped))))
            live.sort(key=lambda entry: entry[0])
            self._starts = [s for s, _ in live]
            self._maps = [m for _, m in live]

    def held(self) -> list[mmap.mmap]:
        """Every live part's map, held (strongly)."""
        with self._lock:
            return [mapped for mapped in (ref() for _, ref in self._maps) if mapped is not None]

    def slab_of(self, address: int, size: int) -> tuple[int, mmap.mmap] | None:
        """(its map's start, the map) of a live part's slab of `size` bytes at `address`."""
        found = self._slabs.get(address)
        mapped = None if found is None or found[0] != size else found[2]()
        return None if mapped is None else (found[1], mapped)

    def hand_back(self, address: int, size: int) -> None:
        """The whole pages of [address, address + size) given back, where a map holds them."""
        with self._lock:
            at = bisect_right(self._starts, address) - 1
            if at < 0 or address + size > self._maps[at][0]:
                return  # not in a part's map (this process's own memory)
            start, mapped = self._starts[at], self._maps[at][1]()
        page = mmap.PAGESIZE
        first = -(-(address - start) // page) * page  # pages wholly inside the buffer only:
        last = (address + size - start) // page * page  # its neighbours' stay
        if mapped is not None and last > first:
            _removed(mapped, first, last - first)


_MAPS = _Maps()


def live_maps() -> list[mmap.mmap]:
    """The maps of every part this process still reads (held: see unmapper.py)."""
    return _MAPS.held()


def slab_of(buffer: pa.Buffer) -> tuple[int, mmap.mmap] | None:
    """(its map's start, the map) where the buffer is a whole slab of a part (slabs.py), of
    at least a byte (an empty one starts where the next slab does); else None."""
    return _MAPS.slab_of(buffer.address, buffer.size) if buffer.size else None


def keep_only(mapped: mmap.mmap, kept: list[tuple[int, int]]) -> None:
    """Hand back every page of a part's map but these (offset, bytes) ranges of whole pages:
    once a sort is done, what its sorted columns do not hold (the part's file would
    otherwise live on with them, whole)."""
    at = 0
    for offset, size in sorted(kept) + [(len(mapped), 0)]:
        if offset > at:
            _removed(mapped, at, offset - at)
        at = max(at, offset + size)


def _removed(mapped: mmap.mmap, at: int, size: int) -> None:
    """The map's pages [at, at + size) given back to the system (their file's too)."""
    with contextlib.suppress(OSError):  # refused: the pages go with the map instead
        mapped.madvise(mmap.MADV_REMOVE, at, size)


def hand_back(column: pa.ChunkedArray) -> None:
    """Give the system back the pages of a part's column read in place, once a sort has
    taken its copy (nothing may read the column after this: its pages then read as zeros)."""
    for chunk in column.chunks:
        for buffer in chunk.buffers():
            if buffer is not None and buffer.size >= mmap.PAGESIZE:
                _MAPS.hand_back(buffer.address, buffer.size)


def _own(array: pa.Array) -> pa.Array:
    """The array with what a sort keeps of it in buffers of this process's pool (the system
    allocator, see parts.py): a dictionary's values (a concatenation of one keeps them), its
    codes left where they lie (a sort copies them, as it does a number column); a nested or
    view type (no summary column is one) copied whole, by Arrow's own pool."""
    pool = pa.default_memory_pool()
    kind = array.type
    if pa.types.is_dictionary(kind):
        return pa.DictionaryArray.from_arrays(
            array.indices, pa.concat_arrays([array.dictionary], memory_pool=pool),
            ordered=kind.ordered)
    if pa.types.is_nested(kind) or pa.types.is_string_view(kind) or pa.types.is_binary_view(
            kind):
        return array.copy_to(pa.default_cpu_memory_manager())
    return pa.concat_arrays([array], memory_pool=pool)


def shared(table: pa.Table) -> SharedPart | pa.Table:
    """The table as a SharedPart where this system has anonymous memory files (Linux);
    else as it is (the pipe then carries it)."""
    if not hasattr(os, "memfd_create") or not os.path.isdir("/proc/self/fd") or (
            not table.num_columns):  # rows without columns: their count is the table's
        return table
    try:
        return SharedPart(table)
    except (OSError, pa.ArrowException):  # no memory for the file, a /proc without fds,
        return table  # a table IPC cannot write (dictionaries that differ by chunk)


def received(rows: object) -> object:
    """A result's rows as the main process keeps them: a SharedPart's table read out."""
    return rows.table() if isinstance(rows, SharedPart) else rows
