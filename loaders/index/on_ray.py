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
from typing import TextIO

from loaders.index.chunk import ChunkResult, Progress, Task
from loaders.index.pool import scan_chunk

MAX_RETRIES = 3  # a task that fails (its worker died, or it raised) is run again this often
_MISSING = ("the Ray index build needs the optional `ray` package "
            "(pip install 'ray[default]'; see docs/cli.md, 'Index builds on a Ray cluster')")


class RayMissing(RuntimeError):
    """ray is not installed: the message says how to get it."""


def _ray():  # noqa: ANN202 - the ray module
    try:
        import ray
    except ImportError:
        raise RayMissing(_MISSING) from None
    return ray


def connect(address: str | None, num_cpus: int | None = None) -> None:
    """Join the cluster at address ("auto": the one this node belongs to), or start a local
    one when no address is given; the board's code is shipped to the workers."""
    ray = _ray()
    if ray.is_initialized():
        return
    code = str(Path(__file__).resolve().parents[1])  # the loaders package
    ray.init(address=address, num_cpus=num_cpus, runtime_env={"py_modules": [code]},
             log_to_driver=False, include_dashboard=False)


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
    pending = {remote.remote(chunk): i for i, chunk in enumerate(chunks)}
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
