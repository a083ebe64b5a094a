"""A sort's column of numbers or text written into the pages its parts' rows held (see
slabs.py): the column gathered into scratch buffers of the thread, its parts' slabs mapped
end to end, the scratch copied there."""
from __future__ import annotations

import ctypes
import mmap
import threading
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa

from loaders.index import kernel
from loaders.index.shared_part import keep_only, slab_of
from loaders.index.slabs import is_text, page_up, slab_type

Runs = tuple[np.ndarray, np.ndarray]  # runs.Runs: (first row, rows) of each run
# a column's slabs, one plane a buffer (a number column's values; a text column's offsets,
# then its data): each chunk's slab address, the size of its whole pages, its map's start
Slabs = list[tuple[list[int], list[int], list[int]]]
Parts = dict[int, mmap.mmap]  # the parts' maps a sort's slabs lie in, by where they start


class InPlaceSort:
    """A sort's columns written into their parts' pages where they can be (claimed), and
    the parts' files let go of the rest once the sort is done."""

    def __init__(self, columns: list[pa.ChunkedArray], runs: Runs | None) -> None:
        self._runs = runs
        self._slabs, self._parts = claimed(columns) if runs is not None else (
            [None] * len(columns), {})
        self._kept: dict[int, list[tuple[int, int]]] = {}  # slabs now sorted columns, by part

    def sorted(self, at: int, column: pa.ChunkedArray) -> pa.Array | None:
        """Column `at` sorted into its slabs; None where it takes the copy."""
        slabs = self._slabs[at]
        out = sorted_in_place(column, self._runs, slabs) if slabs else None
        if out is not None:
            for addresses, sizes, starts in slabs:
                for address, size, start in zip(addresses, sizes, starts):
                    self._kept.setdefault(start, []).append((address - start, size))
        return out

    def done(self) -> None:
        """Every column taken: the parts' pages but the kept slabs given back."""
        let_go(self._parts, self._kept)


def claimed(columns: list[pa.ChunkedArray]) -> tuple[list[Slabs | None], Parts]:
    """Each column's slabs, in chunk order, where each of its chunks is whole slabs of a
    part read in place and no other column shares one, as far as the maps' budget goes
    (each slab is a map of its own: MAP_BUDGET); else None.  And the maps they lie in,
    held until the sort has let go of what its columns do not keep (let_go)."""
    parts: Parts = {}
    found = [_slabs(column, parts) for column in columns]
    seen = Counter(at for slabs in found if slabs for plane in slabs for at in plane[0])
    left = MAP_BUDGET - _LIVE[0]
    out: list[Slabs | None] = []
    for slabs in found:
        pieces = sum(len(plane[0]) for plane in slabs) if slabs else 0
        fits = slabs and pieces <= left and all(seen[at] == 1 for plane in slabs
                                                for at in plane[0])
        out.append(slabs if fits else None)
        left -= pieces if fits else 0
    return out, parts


def let_go(parts: Parts, kept: dict[int, list[tuple[int, int]]]) -> None:
    """Every page of the parts' files but the slabs the sorted columns now hold (`kept`:
    their (offset, bytes) by their map's start) given back: a sorted column keeps its
    part's file, which would otherwise live on whole with it."""
    for start, mapped in parts.items():
        keep_only(mapped, kept.get(start, []))


def _map_budget() -> int:
    """The maps the aliases may hold at once: a quarter of the system's limit on a process's
    maps (vm.max_map_count, 65,530 by default), so the rest of the process (its allocator,
    Arrow, numpy) never meets that limit; a run of more parts is copied as before."""
    try:
        return int(Path("/proc/sys/vm/max_map_count").read_text()) // 4
    except (OSError, ValueError):
        return 16_000


MAP_BUDGET = _map_budget()
_LIVE = [0]  # slabs mapped by live aliases
_LIVE_LOCK = threading.Lock()


def _slabs(column: pa.ChunkedArray, parts: Parts) -> Slabs | None:
    kind = column.type
    if not slab_type(kind) or column.null_count or not column.num_chunks:
        return None
    planes: Slabs = [([], [], []) for _ in range(2 if is_text(kind) else 1)]
    for chunk in column.chunks:
        for (addresses, sizes, starts), data, need in zip(planes, chunk.buffers()[1:],
                                                           _sizes(chunk)):
            found = None if chunk.offset or data is None else slab_of(data)
            if found is None or need > data.size:
                return None
            parts[found[0]] = found[1]
            addresses.append(data.address)
            sizes.append(page_up(data.size))
            starts.append(found[0])
    return planes


def _sizes(chunk: pa.Array) -> tuple[int, ...]:
    """The bytes of each of a chunk's buffers its rows use."""
    if is_text(chunk.type):
        return (len(chunk) + 1) * 4, _text_bytes(chunk)
    return (len(chunk) * chunk.type.bit_width // 8,)


def _text_bytes(chunk: pa.Array) -> int:
    """A text chunk's data bytes (its offsets run from 0: a slab's, see slabs._buffers)."""
    return int(np.frombuffer(chunk.buffers()[1], np.int32, 1, len(chunk) * 4)[0])


def sorted_in_place(column: pa.ChunkedArray, runs: Runs, slabs: Slabs) -> pa.Array | None:
    """The column sorted by its runs, in its own slabs (which then hold it: nothing may read
    the column's chunks after this); None where it cannot be (no build, a refused map).
    The chunks are read through the new maps, so their pages are mapped once, not in the
    parts' maps first."""
    rows = int(runs[1].sum())
    planes = _mapped(slabs)
    if planes is None:
        return None
    starts = [np.cumsum([0, *plane[1][:-1]]) for plane in slabs]
    if is_text(column.type):
        lengths = [len(chunk) for chunk in column.chunks]
        offsets = [_view(planes[0], at, 4 * (n + 1), np.int32) for at, n in zip(starts[0],
                                                                                lengths)]
        ends = [int(o[-1]) for o in offsets]  # each chunk's data bytes
        chunks = [(o, _view(planes[1], at, end, np.uint8))
                  for o, at, end in zip(offsets, starts[1], ends)]
        outs = [_scratch((rows + 1) * 4, 0), _scratch(sum(ends), 1)]
        done = kernel.gather_text(chunks, *runs, *map(memoryview, outs)) is True
    else:
        kind = column.type.to_pandas_dtype()
        chunks = [_view(planes[0], at, len(chunk) * np.dtype(kind).itemsize, kind)
                  for at, chunk in zip(starts[0], column.chunks)]
        outs = [_scratch(rows * np.dtype(kind).itemsize, 0)]
        done = kernel.gather(chunks, *runs, memoryview(outs[0]))
    if not done:
        return None
    buffers = []
    for out, plane in zip(outs, planes):  # the pages all mapped by the reads above
        ctypes.memmove(plane.address, out.ctypes.data, len(out))
        buffers.append(plane.slice(0, len(out)))
    return pa.Array.from_buffers(column.type, rows, [None, *buffers])


def _mapped(slabs: Slabs) -> list[pa.Buffer] | None:
    """Each plane's slabs mapped end to end; None where a map is refused (before any copy:
    the chunks still read as they did, through the parts' maps)."""
    planes = []
    for addresses, sizes, _ in slabs:
        region = kernel.alias(addresses, sizes)
        if region is None:
            return None  # (a plane mapped already goes with `planes`)
        planes.append(pa.foreign_buffer(region, sum(sizes), base=_Mapping(
            region, sum(sizes), len(sizes))))
    return planes


def _view(plane: pa.Buffer, at: int, size: int, kind: type | np.dtype) -> np.ndarray:
    return np.frombuffer(plane, np.uint8, size, int(at)).view(kind)


class _Mapping:
    """An alias's mapping of `pieces` slabs, ended with the last buffer over it."""

    def __init__(self, address: int, size: int, pieces: int) -> None:
        self.address, self.size, self.pieces = address, size, pieces
        with _LIVE_LOCK:
            _LIVE[0] += pieces

    def __del__(self) -> None:
        with _LIVE_LOCK:
            _LIVE[0] -= self.pieces
        kernel.unmap(self.address, self.size)


_LOCAL = threading.local()


def _scratch(size: int, plane: int) -> np.ndarray:
    """This thread's scratch buffer of `size` bytes for a plane: its pages faulted in once,
    not once a column."""
    held = getattr(_LOCAL, "scratch", None)
    if held is None:
        held = _LOCAL.scratch = {}
    if len(held.get(plane, ())) < size:
        held[plane] = np.empty(max(size, 1), np.uint8)
    return held[plane][:size]
