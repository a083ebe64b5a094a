"""Scanning chunks into summary rows, on every core when the work is big enough."""
from __future__ import annotations

import gc
import multiprocessing
import os
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager

from loaders.heap import keep_freed
from loaders.index.chunk import Bundle, ChunkResult, Progress, Task
from loaders.index.pieces import Pieces

INLINE_BYTES = 24 << 20  # below this, starting worker processes costs more than it saves
# Parquet dumps: ~1 ms a sample at 5k tokens (numpy work, no parsing) against ~1.8 s for
# worker processes to start and import: below this many bytes one process is faster
INLINE_TABULAR_BYTES = 160 << 20


def scan_chunk(task: Task) -> ChunkResult:
    """Parse one chunk, or a bundle of them into one batch (its parts' results, in order, in
    .parts); line numbers are relative to each chunk's first line."""
    with _no_cycle_collection():
        return _scan_task(task)


def scan_chunk_in_worker(task: Task) -> ChunkResult:
    """scan_chunk in a worker process: rows made an Arrow table go to the main process
    through shared memory (loaders.index.shared_part), not the pool's pipe."""
    result = scan_chunk(task)
    if "pyarrow" in sys.modules:  # a fork server's worker sends columns, and needs no Arrow
        from loaders.index.shared_part import shared

        if isinstance(result.rows, sys.modules["pyarrow"].Table):
            result.rows = shared(result.rows)
    return result


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Parsed JSON holds no reference cycles, but each container it allocates counts toward
    the cycle collector, whose passes over every live sample of the batch cost more than
    the parse: off while a task runs (whatever it leaves is collected after)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _scan_task(task: Task) -> ChunkResult:
    pieces = Pieces()
    if isinstance(task, Bundle):
        result = ChunkResult(task, parts=[pieces.scan(part) for part in task.parts])
    else:
        result = pieces.scan(task)
    result.rows, result.dropped = pieces.rows()
    for part in (result, *result.parts):  # a sample's problems come when its batch is done
        part.problems.sort(key=lambda problem: problem[0])
    return result


Scanner = Callable[..., list[ChunkResult]]  # scan_all's signature: (chunks, progress, convert)


def scan_all(chunks: list[Task], progress: Progress | None = None,
             convert: Callable[[dict], object] = lambda columns: columns) -> list[ChunkResult]:
    """Scan every chunk, in worker processes when the work is big enough; keeps chunk order.

    `convert` turns each result's columns into what the caller keeps (a DataFrame, say) as
    soon as the result arrives, so raw rows of the whole dump never pile up.
    """
    total = sum(c.nbytes for c in chunks)
    workers = min(len(chunks), len(os.sched_getaffinity(0)))
    if total < (INLINE_TABULAR_BYTES if all(map(_tabular, chunks)) else INLINE_BYTES) or (
            workers < 2):
        return scan_inline(chunks, total, progress, convert)
    results: list[ChunkResult | None] = [None] * len(chunks)
    done = 0

    def keep(i: int, result: ChunkResult) -> None:
        nonlocal done
        if "pyarrow" in sys.modules:  # only a worker that has it sends shared rows
            from loaders.index.shared_part import received

            result.rows = received(result.rows)
        result.rows = convert(result.rows)
        results[i] = result
        done += chunks[i].nbytes
        if progress:
            progress(done, total)

    method = _start_method()
    if method == "fork" and "pyarrow" in sys.modules:
        _imports_before_fork()
    context = multiprocessing.get_context(method)
    waiting = biggest_first(chunks)  # chunks not handed out yet
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=keep_freed)
    try:
        running: dict[Future, int] = {}

        def hand_out() -> None:
            if waiting:
                i = waiting.popleft()
                running[pool.submit(scan_chunk_in_worker, chunks[i])] = i

        for _ in range(IN_FLIGHT * workers):
            hand_out()
        # a forked worker starts at once: this process's own scans would only be a third
        # process on the cores (and the last chunk to finish)
        for i in _while_workers_start(waiting, running) if method != "fork" else ():
            keep(i, scan_chunk(chunks[i]))
        while running:
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                keep(running.pop(future), future.result())
                hand_out()
    finally:  # the workers end beside the run's sort, not before it (7-8 ms: their heaps
        pool.shutdown(wait=False, cancel_futures=True)  # freed, each process joined)
    return results


def _imports_before_fork() -> None:
    """What a forked worker's first chunk would import, imported before the workers are
    forked: Arrow's pandas bridge (pa.array's first call imports it and compiles its regular
    expressions, 10 ms), the pandas version check it makes (pyarrow.vendored.version) and
    the fd handover of shared_part (multiprocessing.resource_sharer), 5-7 ms more of each
    worker's first chunk.  This process imports them anyway (it makes the run's frame and
    receives the parts), so here they cost nothing more."""
    import multiprocessing.resource_sharer  # noqa: F401

    import pyarrow.pandas_compat  # noqa: F401
    import pyarrow.vendored.version  # noqa: F401


def biggest_first(chunks: list[Task]) -> deque[int]:
    """The chunks' indices, the biggest first (in order among equals): the last to finish
    are the small ones, so the cores finish together."""
    return deque(sorted(range(len(chunks)), key=lambda i: -chunks[i].nbytes))


IN_FLIGHT = 2  # chunks a worker holds at once: the next is at hand when one is done


def _start_method() -> str:
    """fork in a process with one thread (the CLI, a test): a worker starts at once, with
    the parser already imported.  A fork server otherwise (the board's server runs many
    threads, and a fork copies a lock another thread may hold); its workers import the
    parser themselves, about 0.2 s of a core each."""
    return "fork" if threading.active_count() == 1 else "forkserver"


def _while_workers_start(waiting: deque[int], running: dict[Future, int]) -> Iterator[int]:
    """The chunks this process scans itself, last first, while the workers start (a fork
    server and each worker import the parser, about 0.2 s with every core idle but for
    that): one at a time, until a worker has sent a result or none is left waiting.  Never
    one handed to the pool (a cancelled future breaks 3.11's pool if a worker dies)."""
    while waiting and not any(future.done() for future in running):
        yield waiting.pop()


def _tabular(task: Task) -> bool:
    parts = task.parts if isinstance(task, Bundle) else (task,)
    return all(part.tabular for part in parts)


def scan_inline(chunks: list[Task], total: int, progress: Progress | None,
                convert: Callable[[dict], object]) -> list[ChunkResult]:
    """Scan the chunks in this process, in order (no worker pool)."""
    results, done = [], 0
    for chunk in chunks:
        result = scan_chunk(chunk)
        result.rows = convert(result.rows)
        results.append(result)
        done += chunk.nbytes
        if progress:
            progress(done, total)
    return results
