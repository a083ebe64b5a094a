"""The reference point: a bare orjson.loads of every line, on every core, same chunks."""
from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import orjson

from loaders.find.walk import discover
from loaders.index.chunk import Chunk, plan_chunks


def _parse(chunk: Chunk) -> int:
    with open(chunk.path, "rb") as handle:
        handle.seek(chunk.start)
        data = handle.read(chunk.end - chunk.start)
    count = 0
    for line in data.split(b"\n"):
        if line:
            orjson.loads(line)
            count += 1
    return count


def chunks_of(root: Path, since: dict[str, int] | None = None) -> list[Chunk]:
    """Chunks of every dump file, from byte since[rel] (default 0) to the end."""
    since = since or {}
    chunks = []
    for dump in discover(root):
        start = since.get(dump.rel, 0)
        chunks += plan_chunks(str(dump.path), dump.rel, dump.rank, start, dump.path.stat().st_size)
    return chunks


def parse_all(chunks: list[Chunk]) -> int:
    """Parse every line of the chunks on all cores; returns the number of lines."""
    workers = len(os.sched_getaffinity(0))
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        return sum(pool.map(_parse, chunks))
