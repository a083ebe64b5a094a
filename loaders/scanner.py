"""Byte-range chunks of dump files, parsed into summary rows, on every core."""
from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import BinaryIO

CHUNK_BYTES = 16 << 20
INLINE_BYTES = 24 << 20  # below this, starting worker processes costs more than it saves


@dataclass(frozen=True)
class Chunk:
    path: str
    rel: str
    rank: int
    start: int
    end: int
    continues_line: bool = False  # first bytes finish a line that an earlier parse accepted
    format: str = "native"  # a loaders.formats name


@dataclass
class ChunkResult:
    chunk: Chunk
    rows: object = None  # columns {name: list} from the worker; the caller may convert them
    problems: list[tuple[int, str, bool]] = field(default_factory=list)  # (line, reason, dropped)
    lines: int = 0
    parsed_until: int = 0
    ends_mid_line: bool = False
    pending_bytes: int = 0


def plan_chunks(path: str, rel: str, rank: int, start: int, size: int,
                continues_line: bool = False, target: int = CHUNK_BYTES,
                fmt: str = "native") -> list[Chunk]:
    """Split [start, size) at newlines into chunks of about `target` bytes."""
    bounds = [start]
    with open(path, "rb") as handle:
        pos = start + target
        while pos < size:
            pos = _next_line_start(handle, pos, size)
            if pos >= size:
                break
            bounds.append(pos)
            pos += target
    bounds.append(size)
    return [Chunk(path, rel, rank, a, b, continues_line and a == start, fmt)
            for a, b in zip(bounds, bounds[1:]) if b > a]


def _next_line_start(handle: BinaryIO, pos: int, size: int) -> int:
    handle.seek(pos)
    while pos < size:
        block = handle.read(1 << 20)
        cut = block.find(b"\n")
        if cut >= 0:
            return pos + cut + 1
        pos += len(block)
    return size


def scan_chunk(chunk: Chunk) -> ChunkResult:
    """Parse one chunk; line numbers in the result are relative to the chunk's first line."""
    from loaders.formats import BY_NAME

    if BY_NAME[chunk.format].tabular:
        from loaders.parquet import scan_parquet

        return scan_parquet(chunk)
    from loaders.jsonl import scan_jsonl

    return scan_jsonl(chunk)


def columns_of(rows: list[dict]) -> dict[str, list]:
    """Rows as columns (missing values None): far smaller to send between processes."""
    names = dict.fromkeys(name for row in rows for name in row)
    return {name: [row.get(name) for row in rows] for name in names}


Progress = Callable[[int, int], None]


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
