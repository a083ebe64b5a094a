"""Byte-range chunks of dump files, and what parsing one chunk yields."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import BinaryIO

CHUNK_BYTES = 16 << 20


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


def columns_of(rows: list[dict]) -> dict[str, list]:
    """Rows as columns (missing values None): far smaller to send between processes."""
    names = dict.fromkeys(name for row in rows for name in row)
    return {name: [row.get(name) for row in rows] for name in names}


Progress = Callable[[int, int], None]  # (bytes done, bytes total)
