"""Scanning chunks into summary rows, on every core when the work is big enough."""
from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed

from loaders.formats import BY_NAME
from loaders.index.chunk import Chunk, ChunkResult, Progress
from loaders.index.scan_jsonl import scan_jsonl
from loaders.index.scan_parquet import scan_parquet

INLINE_BYTES = 24 << 20  # below this, starting worker processes costs more than it saves


def scan_chunk(chunk: Chunk) -> ChunkResult:
    """Parse one chunk; line numbers in the result are relative to the chunk's first line."""
    if BY_NAME[chunk.format].tabular:
        return scan_parquet(chunk)
    return scan_jsonl(chunk)


def scan_all(chunks: list[Chunk], progress: Progress | None = None,
             convert: Callable[[dict], object] = lambda columns: columns) -> list[ChunkResult]:
    """Scan every chunk, in worker processes when the work is big enough; keeps chunk order.

    `convert` turns each result's columns into what the caller keeps (a DataFrame, say) as
    soon as the result arrives, so raw rows of the whole dump never pile up.
    """
    total = sum(c.end - c.start for c in chunks)
    workers = min(len(chunks), len(os.sched_getaffinity(0)))
    if total < INLINE_BYTES or workers < 2:
        return _scan_inline(chunks, total, progress, convert)
    results: list[ChunkResult | None] = [None] * len(chunks)
    done = 0
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        futures = {pool.submit(scan_chunk, c): i for i, c in enumerate(chunks)}
        for future in as_completed(futures):
            result = future.result()
            result.rows = convert(result.rows)
            results[futures[future]] = result
            done += chunks[futures[future]].end - chunks[futures[future]].start
            if progress:
                progress(done, total)
    return results


def _scan_inline(chunks: list[Chunk], total: int, progress: Progress | None,
                 convert: Callable[[dict], object]) -> list[ChunkResult]:
    results, done = [], 0
    for chunk in chunks:
        result = scan_chunk(chunk)
        result.rows = convert(result.rows)
        results.append(result)
        done += chunk.end - chunk.start
        if progress:
            progress(done, total)
    return results
