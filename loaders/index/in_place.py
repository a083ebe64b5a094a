"""A sort's number column written into the pages its parts' rows held (see slabs.py): the
column gathered into a scratch buffer of the thread, its parts' slabs mapped end to end,
the scratch copied there."""
from __future__ import annotations

import ctypes
import threading
from collections import Counter

import numpy as np
import pyarrow as pa

from loaders.index import kernel
from loaders.index.shared_part import slab_pages
from loaders.index.slabs import PAGE, slab_type

Runs = tuple[np.ndarray, np.ndarray]  # runs.Runs: (first row, rows) of each run
Slabs = tuple[list[int], list[int]]  # a column's slabs: their addresses, their pages' sizes


def claimed(columns: list[pa.ChunkedArray]) -> list[Slabs | None]:
    """Each column's slabs, in chunk order, where each of its chunks is a whole slab of a
    part read in place and no other column shares one; else None."""
    found = [_slabs(column) for column in columns]
    seen = Counter(at for slabs in found if slabs for at in slabs[0])
    return [slabs if slabs and all(seen[at] == 1 for at in slabs[0]) else None
            for slabs in found]


def _slabs(column: pa.ChunkedArray) -> Slabs | None:
    if not slab_type(column.type) or column.null_count or not column.num_chunks:
        return None
    width = column.type.bit_width // 8
    addresses, sizes = [], []
    for chunk in column.chunks:
        data = chunk.buffers()[1]
        pages = None if chunk.offset or data is None else slab_pages(data.address)
        if not pages or len(chunk) * width > pages:
            return None
        addresses.append(data.address)
        sizes.append(pages)
    return addresses, sizes


def sorted_in_place(column: pa.ChunkedArray, runs: Runs, slabs: Slabs) -> pa.Array | None:
    """The column sorted by its runs, in its own slabs (which then hold it: nothing may read
    the column's chunks after this); None where it cannot be (no build, a refused map)."""
    width = column.type.bit_width // 8
    rows = int(runs[1].sum())
    scratch = _scratch(rows * width)
    chunks = [chunk.to_numpy(zero_copy_only=True) for chunk in column.chunks]
    if not kernel.gather(chunks, *runs, memoryview(scratch)):
        return None
    region = kernel.alias(*slabs)
    if region is None:
        return None
    out = pa.foreign_buffer(region, rows * width, base=_Mapping(region, sum(slabs[1])))
    # read first: a read maps 16 pages a fault, a write one (2 us each on this VM)
    np.frombuffer(out, np.uint8)[::PAGE].sum()
    ctypes.memmove(region, scratch.ctypes.data, rows * width)
    return pa.Array.from_buffers(column.type, rows, [None, out])


class _Mapping:
    """An alias's mapping, ended with the last buffer over it."""

    def __init__(self, address: int, size: int) -> None:
        self.address, self.size = address, size

    def __del__(self) -> None:
        kernel.unmap(self.address, self.size)


_LOCAL = threading.local()


def _scratch(size: int) -> np.ndarray:
    """This thread's scratch buffer of `size` bytes: its pages faulted in once, not once a
    column."""
    held = getattr(_LOCAL, "scratch", None)
    if held is None or len(held) < size:
        held = _LOCAL.scratch = np.empty(size, np.uint8)
    return held[:size]
