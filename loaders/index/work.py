"""What a refresh does to each file: nothing (its stat unchanged), parse its new bytes (it
grew, its parsed part unchanged) or parse it whole; and the chunks of that parse."""
from __future__ import annotations

import os
import stat as st
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from loaders.find.kind import UNKNOWN, classify
from loaders.find.remote import stat_of
from loaders.find.walk import DumpFile, escapes
from loaders.formats import BY_NAME
from loaders.index.chunk import CHUNK_BYTES, Chunk, plan_chunks
from loaders.index.group_stat import joined_stat
from loaders.index.line_checks import Places, lines_unchanged
from loaders.index.ondisk import FileState, content_hashes

PlacesOf = Callable[[str], Places]  # a file's indexed lines (line_checks.stored_places)


@dataclass
class Work:
    """What one file needs: nothing (kept), its new bytes (grown) or a full parse."""
    dump: DumpFile
    stat: os.stat_result | None  # None when even the stat failed (a broken link)
    base: FileState | None  # the state parsing continues from; None for a full parse
    format: str = UNKNOWN
    chunks: list[Chunk] = field(default_factory=list)
    reason: str = ""  # a problem with the whole file: skipped, unreadable, a split vote
    checked_ns: int = 0  # when the stat was taken


def _unchanged(path: Path, old: FileState) -> bool:
    """The part of the file parsed before still holds the bytes it held then."""
    return content_hashes(path, old.parsed_until) == old.hashes()


def _edited_in_place(dump: DumpFile, stat: os.stat_result, old: FileState,
                     places: PlacesOf | None) -> bool:
    """A local file of the same size with another stat, some indexed line of which no longer
    has its bytes (loaders.index.line_checks)."""
    if places is None or stat.st_size != old.size or not isinstance(dump.path, Path):
        return False
    return not lines_unchanged(dump.path, places(dump.rel))


def _plan(dump: DumpFile, stat: os.stat_result, old: FileState | None, checked: int,
          places: PlacesOf | None = None) -> Work:
    if old is not None and old.same_stat(stat):
        if not old.racy:
            return Work(dump, stat, old, old.format, checked_ns=checked)
        if old.format in BY_NAME and _unchanged(dump.path, old):
            # checked by content; out of the racy window, the stat alone will do again once
            # this renewed state is saved (with the next change: see _same_states)
            renewed = replace(old, checked_ns=checked)
            return Work(dump, stat, old if renewed.racy else renewed, old.format,
                        checked_ns=checked)
    kind = classify(dump.path, dump.rel)
    fmt = kind.format
    if fmt not in BY_NAME:
        return Work(dump, stat, None, fmt, reason=kind.reason, checked_ns=checked)
    tabular = BY_NAME[fmt].tabular
    grown = (old is not None and old.format == fmt and not tabular
             and stat.st_size >= old.parsed_until and _unchanged(dump.path, old)
             and not _edited_in_place(dump, stat, old, places))
    base = old if grown else None
    if fmt == "board_parquet":  # whole row groups a chunk: imported here (pyarrow)
        from loaders.index.scan_board import plan_row_groups

        chunks = plan_row_groups(str(dump.path), dump.rel, dump.rank, stat.st_size,
                                 CHUNK_BYTES)
    else:
        chunks = _line_chunks(dump, stat, base, fmt, stat.st_size + 1 if tabular else CHUNK_BYTES)
    return Work(dump, stat, base, fmt, chunks, kind.reason, checked)


def _line_chunks(dump: DumpFile, stat: os.stat_result, base: FileState | None, fmt: str,
                 target: int) -> list[Chunk]:
    """The chunks of a file of lines, from where its parse starts to its end."""
    start = base.parsed_until if base else 0
    return plan_chunks(str(dump.path), dump.rel, dump.rank, start, stat.st_size,
                       continues_line=bool(base and base.ends_mid_line), fmt=fmt,
                       target=target)


def sized_for_run(works: list[Work]) -> list[Work]:
    """The works, a small run's files of lines split into chunks half as big again.

    A chunk costs the same few milliseconds whatever its size (a task, a batch's ~100 numpy
    calls and its table, its hand-over and receipt, a part in the sort): on a run of 158 MB,
    12 chunks of 13 MB took 0.255 s, 8 of 20 MB 0.245 s (median of 12 alternations).  A
    worker then holds a third more, which only a big run minds: from SMALL_RUN_CHUNKS chunks
    on (512 MB) the run keeps CHUNK_BYTES.  Planned again here, once the run's size is
    known: a boundary is a 64-kB read of a local file."""
    lines = sum(chunk.nbytes for work in works for chunk in work.chunks if not chunk.tabular)
    if lines > SMALL_RUN_CHUNKS * CHUNK_BYTES:
        return works
    target = CHUNK_BYTES * 3 // 2
    return [replace(work, chunks=_line_chunks(work.dump, work.stat, work.base, work.format,
                                              target)) if _splits_again(work) else work
            for work in works]


SMALL_RUN_CHUNKS = 32  # a run of fewer bytes than this many chunks is small: sized_for_run


def _splits_again(work: Work) -> bool:
    """A local file of lines in more than one chunk (a URL's boundaries are requests)."""
    return (len(work.chunks) > 1 and isinstance(work.dump.path, Path) and work.stat is not None
            and not BY_NAME[work.format].tabular)


def work_for(dump: DumpFile, old: FileState | None, places: PlacesOf | None = None
              ) -> Work | None:
    """The work for one file; None when it was deleted since discovery (not part of the run).

    A file that exists but cannot be read is kept as "unknown", with the reason as a problem.
    """
    checked = time.time_ns()
    stat = None
    try:
        stat = stat_of(dump.path)  # a RemoteStat for a URL (loaders.find.remote)
        if not st.S_ISREG(stat.st_mode):  # a FIFO would block the first read forever
            return Work(dump, stat, None, reason="not a regular file; file skipped")
        if not dump.confined and escapes(dump):  # a link out (since its walk, maybe)
            return Work(dump, stat, None, checked_ns=checked,
                        reason="a link to a file outside the dump dir; file skipped")
        stat = joined_stat(dump.path, dump.rel, stat)
        return _plan(dump, stat, old, checked, places)
    except OSError as err:
        local = isinstance(dump.path, Path)
        if isinstance(err, FileNotFoundError) and not (local and os.path.lexists(dump.path)):
            return None
        why = ("a broken link" if stat is None and local and os.path.islink(dump.path)
               else err.strerror)
        return Work(dump, stat, None, reason=f"cannot read: {why or err}; file skipped",
                    checked_ns=checked if stat is not None else 0)
