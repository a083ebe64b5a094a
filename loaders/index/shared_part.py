"""A worker's summary rows handed to the main process through shared memory, not the pool's
pipe.

Pickled into a pipe, an Arrow table is copied four times (into the pickle, into the pipe,
out of it, out of the pickle): on the long run's 520 MB of rows, 1.5-2 s of CPU on two cores
that parse.  Here the worker writes the table once into an anonymous memory file (memfd) as
Arrow IPC and sends only a handle to it; the main process maps the file and reads the
table where it lies.  Past the first MAPPED_BYTES of a run it copies each column out once,
into a buffer of its own, so that a large run's sort can still let each column go as soon as
it is sorted (parts.sorted_parts): a map goes only with the last of its columns.

The handle is multiprocessing's own (reduction.DupFd): the worker keeps a duplicate of the
file's descriptor until the main process asks for it over a Unix socket, so a file is never
gone before it is read, and it is freed once both sides close it.
"""
from __future__ import annotations

import os
from multiprocessing import reduction

import pyarrow as pa
import pyarrow.ipc as ipc


class SharedPart:
    """A table in an anonymous memory file of the process that made it (picklable)."""

    def __init__(self, table: pa.Table) -> None:
        fd = os.memfd_create("rl-board-part", os.MFD_CLOEXEC)
        try:
            with pa.output_stream(f"/proc/self/fd/{fd}") as sink, \
                    ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
            self.rows = table.num_rows
            self._handle = reduction.DupFd(fd)  # the worker's copy, until it is asked for
        finally:
            os.close(fd)

    def table(self, own: bool = True) -> pa.Table:
        """The table (call once): each column in buffers of this process, or with `own`
        false, all but dictionaries read where they are mapped (the map goes when the last
        of those columns does)."""
        fd = self._handle.detach()
        try:
            source = pa.memory_map(f"/proc/self/fd/{fd}")
        finally:
            os.close(fd)  # the map keeps the file
        with source:
            mapped = ipc.open_file(source).read_all()
            # a dictionary is copied out even so: a sort's take keeps it, where it keeps
            # nothing else of the column
            columns = [pa.chunked_array([_own(chunk) for chunk in column.chunks], column.type)
                       if own or pa.types.is_dictionary(column.type) or pa.types.is_nested(
                           column.type) else column for column in mapped.columns]
            table = pa.Table.from_arrays(columns, schema=mapped.schema)
            del mapped, columns  # owned: nothing of the map is left when it closes
        return table


def _own(array: pa.Array) -> pa.Array:
    """A copy of the array in buffers of this process's pool (the system allocator, see
    parts.py), a dictionary's values too (a concatenation of one keeps them); a nested or
    view type (no summary column is one) copied whole, by Arrow's own pool."""
    pool = pa.default_memory_pool()
    kind = array.type
    if pa.types.is_dictionary(kind):
        return pa.DictionaryArray.from_arrays(
            pa.concat_arrays([array.indices], memory_pool=pool),
            pa.concat_arrays([array.dictionary], memory_pool=pool), ordered=kind.ordered)
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


def received(rows: object, own: bool = True) -> object:
    """A result's rows as the main process keeps them: a SharedPart's table read out (with
    `own` false, left where it is mapped)."""
    return rows.table(own) if isinstance(rows, SharedPart) else rows
