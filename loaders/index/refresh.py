"""Bringing a stored index up to date with the files on disk, parsing only what changed."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from loaders import schema as S
from loaders.find.kind import detect, first_record
from loaders.find.walk import DumpFile
from loaders.formats import BY_NAME
from loaders.index.chunk import CHUNK_BYTES, Chunk, ChunkResult, Progress, plan_chunks
from loaders.index.ondisk import FileState, Stored, edge_hashes
from loaders.index.pool import scan_all
from loaders.index.table import combine
from loaders.metrics.lines import from_json

MAX_STORED_PROBLEMS = 2000  # per file; the counts stay exact
UNKNOWN = "unknown"
METRICS = "metrics"  # a training-metric log beside the dumps: read by loaders.metrics


@dataclass
class Work:
    """What one file needs: nothing (kept), its new bytes (grown) or a full parse."""
    dump: DumpFile
    stat: os.stat_result
    base: FileState | None  # the state parsing continues from; None for a full parse
    format: str = UNKNOWN
    chunks: list[Chunk] = field(default_factory=list)


def _work_for(dump: DumpFile, old: FileState | None) -> Work:
    stat = dump.path.stat()
    if old and old.size == stat.st_size and old.mtime_ns == stat.st_mtime_ns:
        return Work(dump, stat, old, old.format)
    fmt = detect(dump.path, dump.rel) or (METRICS if _is_metrics(dump.path) else UNKNOWN)
    if fmt in (UNKNOWN, METRICS):
        return Work(dump, stat, None, fmt)
    grown = (old and old.format == fmt and not BY_NAME[fmt].tabular
             and stat.st_size >= old.parsed_until
             and edge_hashes(dump.path, old.parsed_until) == (old.head_hash, old.tail_hash))
    base = old if grown else None
    start = base.parsed_until if base else 0
    chunks = plan_chunks(str(dump.path), dump.rel, dump.rank, start, stat.st_size,
                         continues_line=bool(base and base.ends_mid_line), fmt=fmt,
                         target=stat.st_size + 1 if BY_NAME[fmt].tabular else CHUNK_BYTES)
    return Work(dump, stat, base, fmt, chunks)


def refresh(files: list[DumpFile], stored: Stored | None,
            progress: Progress | None = None) -> tuple[Stored, str]:
    """The up-to-date index and the cache status: "hit", "partial" or "miss"."""
    old_files = stored.files if stored else {}
    works = []
    for dump in files:
        try:
            works.append(_work_for(dump, old_files.get(dump.rel)))
        except OSError:
            continue  # deleted or unreadable since discovery: it is simply not part of the run
    results = scan_all([c for w in works for c in w.chunks], progress, convert=pd.DataFrame)
    by_file: dict[str, list[ChunkResult]] = {}
    for result in results:
        by_file.setdefault(result.chunk.rel, []).append(result)
    states, parts, problems = {}, [], []
    keep = {w.dump.rel for w in works if w.base is not None}
    if stored is not None:
        parts.append(stored.frame[stored.frame[S.FILE].astype("string").isin(keep)])
        problems = [p for p in stored.problems if p["file"] in keep]
    for work in works:
        state, frames, found = _apply(work, by_file.get(work.dump.rel, []))
        states[work.dump.rel] = state
        parts.extend(frames)
        problems.extend(found)
    status = _status(stored, works)
    if status == "hit":
        return Stored(stored.frame, states, stored.problems), status
    return Stored(combine(parts), states, problems), status


def _apply(work: Work, results: list[ChunkResult]
           ) -> tuple[FileState, list[pd.DataFrame], list[dict]]:
    base = work.base
    line_base = base.lines if base else 0
    bad = base.bad_lines if base else 0
    frames, problems = [], []
    if work.format == UNKNOWN and base is None:
        problems.append({"file": work.dump.rel, "line": 0, "dropped": False,
                         "reason": "not in a known dump format; file skipped"})
    for result in results:
        if len(result.rows):
            result.rows[S.LINE] += line_base
            frames.append(result.rows)
        for line, reason, dropped in result.problems:
            bad += dropped
            if len(problems) < MAX_STORED_PROBLEMS:
                problems.append({"file": work.dump.rel, "line": line + line_base,
                                 "reason": reason, "dropped": dropped})
        line_base += result.lines
    return _state(work, results, line_base, bad), frames, problems


def _is_metrics(path: Path) -> bool:
    """Training-metric logs live beside dumps; they are not a problem, just not samples."""
    record = first_record(path)
    return record is not None and from_json(record) is not None


def _state(work: Work, results: list[ChunkResult], lines: int, bad: int) -> FileState:
    if not results:
        if work.base is None:
            return FileState(work.dump.rel, work.stat.st_size, work.stat.st_mtime_ns, 0, 0,
                             *edge_hashes(work.dump.path, 0), format=work.format)
        base = work.base
        return FileState(**{**base.__dict__, "size": work.stat.st_size,
                            "mtime_ns": work.stat.st_mtime_ns})
    last = results[-1]
    head, tail = edge_hashes(work.dump.path, last.parsed_until)
    return FileState(work.dump.rel, work.stat.st_size, work.stat.st_mtime_ns,
                     last.parsed_until, lines, head, tail, last.ends_mid_line,
                     last.pending_bytes, bad, work.format)


def _status(stored: Stored | None, works: list[Work]) -> str:
    if stored is None or all(w.base is None for w in works):
        return "miss"
    parsed = any(w.chunks for w in works)
    changed = parsed or set(stored.files) != {w.dump.rel for w in works} or any(
        w.base is not None and (w.base.size, w.base.mtime_ns) != (w.stat.st_size,
                                                                   w.stat.st_mtime_ns)
        for w in works)
    return "partial" if changed else "hit"
