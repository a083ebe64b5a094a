"""Handing freed heap memory back to the system after a run is loaded, and keeping it in a
parser worker.

Loading a run's index builds its frame out of a table read whole: the table's buffers and the
conversion's temporaries are freed at the end, but glibc's allocator keeps most of what was
freed in its arenas, so the server's resident size stays at the load's peak (on the long-run
benchmark, 1,150 MB resident for a frame of 590 MB).  malloc_trim returns those pages.

A parser worker is the other way round: it makes and frees the same few tens of MB a chunk,
and glibc, until its thresholds adapt, maps a chunk's big buffers afresh and gives freed
memory back, so a worker's second chunk faulted in 6,000 new pages again (15 ms on this VM).
keep_freed() makes the first chunk's memory serve the next ones.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Iterator


@functools.cache
def _libc_function(name: str) -> ctypes._CFuncPtr | None:
    for library in _libraries():
        try:
            return getattr(ctypes.CDLL(library), name)
        except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to tune
            continue  # this way
    return None


def _libraries() -> Iterator[str | None]:
    """The interpreter's own symbols, then the C library by name, looked up only when they
    lack the function: find_library runs `ldconfig -p` in a subprocess, a fork and an exec
    at every parser worker's start (a tuple of both ran it every time, before the first)."""
    yield None
    yield ctypes.util.find_library("c")


def _trim() -> ctypes._CFuncPtr | None:
    return _libc_function("malloc_trim")


def give_back() -> bool:
    """Return the heap's free pages to the system; False where the C library cannot."""
    trim = _trim()
    if trim is None:
        return False
    trim(0)
    return True


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
KEPT_BYTES = 256 << 20  # a worker keeps this much freed heap, and maps no buffer below it


def keep_freed() -> bool:
    """This process's big buffers from its heap, and its freed memory kept for the next:
    for a short-lived parser worker; False where the C library cannot."""
    mallopt = _libc_function("mallopt")
    if mallopt is None:
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, KEPT_BYTES) and mallopt(M_TRIM_THRESHOLD,
                                                                    2 * KEPT_BYTES))
