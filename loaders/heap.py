"""Handing freed heap memory back to the system after a run is loaded.

Loading a run's index builds its frame out of a table read whole: the table's buffers and the
conversion's temporaries are freed at the end, but glibc's allocator keeps most of what was
freed in its arenas, so the server's resident size stays at the load's peak (on the long-run
benchmark, 1,150 MB resident for a frame of 590 MB).  malloc_trim returns those pages.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools


@functools.cache
def _trim() -> ctypes._CFuncPtr | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to give back this way
        return None


def give_back() -> bool:
    """Return the heap's free pages to the system; False where the C library cannot."""
    trim = _trim()
    if trim is None:
        return False
    trim(0)
    return True
