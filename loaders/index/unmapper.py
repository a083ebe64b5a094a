"""The workers' parts unmapped on a thread of their own, beside the frame's making.

Once a run's parts are sorted, their maps go, and the system frees their files' pages as
they do: on the 128,000-sample dump, 11-13 ms of the main thread, with the other core idle
while the frame is made (table.framed, one thread).  An Unmapper holds every live part's
map before the sort, so that the sort's copies let go of the parts' columns without an
unmap; then a thread drops the maps (mmap's unmap runs without the GIL) while the main
thread makes the frame, and joins before the run is handed on: no part's map outlives the
build, as before.
"""
from __future__ import annotations

import threading
from types import TracebackType

from loaders.index.shared_part import live_maps


class Unmapper:
    """with Unmapper() as unmapper: sort the parts; unmapper.start(); make the frame.
    The maps that only the unmapper holds then go on its thread, joined at the block's
    end."""

    def __init__(self) -> None:
        self._maps = live_maps()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Unmapper:
        return self

    def start(self) -> None:
        """Drop the held maps on a thread (the caller holds no column of the parts)."""
        if self._maps and self._thread is None:
            self._thread = threading.Thread(target=self._maps.clear, name="rl-board-unmap",
                                            daemon=True)
            self._thread.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._thread is not None:
            self._thread.join()
        self._maps.clear()  # not started (an error in the sort): they go here
