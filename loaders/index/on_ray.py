"""The index build on a Ray cluster: the local pool's scan_chunk, one Ray task per chunk.

`ray_scanner(address)` is a drop-in for pool.scan_all (refresh calls it with the chunks,
a progress callback and the converter), so planning, merging and the index files are the
ones a local build makes: only where each chunk is scanned changes.  Every node must see
the dump at the same path (a shared file system).  The board's code travels with the tasks
(Ray's runtime_env py_modules); each node needs the board's requirements installed.

`ray` is optional: it is imported only here, when --ray is asked for.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TextIO

from loaders.index.chunk import ChunkResult, Progress, Task
from loaders.index.pool import biggest_first, scan_chunk

MAX_RETRIES = 3  # a task that fails (its worker died, or it raised) is run again this often
_MISSING = ("the Ray index build needs the optional `ray` package "
            "(pip install 'ray[default]'; see docs/cli.md, 'Index builds on a Ray cluster')")


class RayMissing(RuntimeError):
    """ray is not installed: the message says how to get it."""


def _ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise RayMissing(_MISSING) from None
    return ray


def connect(address: str | None, num_cpus: int | None = None) -> float:
    """Join the cluster at address ("auto": the one this node belongs to), or start a local
    one when no address is given; the board's code is shipped to the workers, and every CPU's
    worker is made ready (_ready).  The seconds it took (0 when already connected)."""
    ray = _ray()
    if ray.is_initialized():
        return 0.0
    started = time.perf_counter()
    code = str(Path(__file__).resolve().parents[1])  # the loaders package
    ray.init(address=address, num_cpus=num_cpus, runtime_env={"py_modules": [code]},
             log_to_driver=False, include_dashboard=False)
    _ready(ray)
    return time.perf_counter() - started


# seconds a warm task holds its CPU: tasks that overlap land on workers of their own
WARM_HOLD = 0.2
WARM_TIMEOUT = 30.0  # a worker slow to start: the build goes on without waiting for it


def _ready(ray: ModuleType) -> None:
    """Start a worker on every free CPU of the cluster, each with the scan imported, before
    the build: a worker's first task otherwise waits for its start with the board's code and
    its imports (1.3 s on this machine, the same for one worker or many: 2 workers built
    `large` 1.2-1.4x faster than 1 with that wait, 1.6-1.8x without it).  Only the CPUs
    free now: a task for each CPU a training job holds (a verl cluster's) would queue on
    the free ones, WARM_HOLD a round; the build's tasks take those CPUs as they come free,
    as before."""
    cpus = int(ray.available_resources().get("CPU", 0))
    if cpus < 1:
        return
    warm = ray.remote(num_cpus=1, max_retries=0)(_warm_worker)
    ray.wait([warm.remote(WARM_HOLD) for _ in range(cpus)], num_returns=cpus,
             timeout=WARM_TIMEOUT)


def _warm_worker(hold: float) -> None:
    """In a worker: what a scan task imports and loads first, then hold the CPU a while."""
    from loaders.index import lines, pool  # noqa: F401 - the scan's modules, imported here

    lines.available()  # the C scan loaded and its tables set
    time.sleep(hold)


def ray_scanner(report: TextIO | None = sys.stderr, retries: int = MAX_RETRIES,
                every: float = 2.0, task: Callable[[Task], ChunkResult] = scan_chunk
                ) -> Callable[..., list[ChunkResult]]:
    """A scan_all for refresh that runs each `task` (the pool's scan_chunk) on the
    connected Ray cluster."""
    def scan(chunks: list[Task], progress: Progress | None = None,
             convert: Callable[[dict], object] = lambda columns: columns
             ) -> list[ChunkResult]:
        return _scan(chunks, progress, convert, report, retries, every, task)
    return scan


def _scan(chunks: list[Task], progress: Progress | None, convert: Callable[[dict], object],
          report: TextIO | None, retries: int, every: float,
          task: Callable[[Task], ChunkResult]) -> list[ChunkResult]:
    ray = _ray()
    remote = ray.remote(max_retries=retries, retry_exceptions=True)(task)
    # submitted biggest first, as the local pool hands them out: the cluster's last tasks
    # are its small ones
    pending = {remote.remote(chunks[i]): i for i in biggest_first(chunks)}
    results: list[ChunkResult | None] = [None] * len(chunks)
    total = sum(c.nbytes for c in chunks)
    done_bytes, last = 0, 0.0
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=min(len(pending), 16), timeout=every)
        for ref in ready:
            i = pending.pop(ref)
            result = ray.get(ref)  # raises once the task failed `retries` more times
            result.rows = convert(result.rows)
            results[i] = result
            done_bytes += chunks[i].nbytes
            if progress:
                progress(done_bytes, total)
        if report is not None and (time.monotonic() - last >= every or not pending):
            last = time.monotonic()
            report.write(f"ray: {len(chunks) - len(pending)}/{len(chunks)} tasks, "
                         f"{done_bytes / 1e6:,.0f}/{total / 1e6:,.0f} MB\n")
            report.flush()
    return results  # type: ignore[return-value]
