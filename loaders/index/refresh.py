"""Bringing a stored index up to date with the files on disk, parsing only what changed.

A file is trusted as indexed only while its size, mtime, ctime and inode are all unchanged
(and, right after a write, its sampled content too).  Otherwise its parsed part is checked
by content: unchanged, only the new bytes are parsed; changed, the whole file is.
"""
from __future__ import annotations

import functools
from collections.abc import Collection
from dataclasses import replace

import pandas as pd

from loaders import schema as S
from loaders.find.kind import METRICS, UNKNOWN
from loaders.find.walk import DumpFile
from loaders.index.append import appended, grown_columns, kept
from loaders.index.arrow_part import table_of
from loaders.index.chunk import ChunkResult, Progress, bundled
from loaders.index.grown_columns import GrownColumns, next_row_of
from loaders.index.line_checks import stored_places
from loaders.index.merge import in_file_order, split, with_cap_notes
from loaders.index.ondisk import FileState, Stored, content_hashes, stat_fields
from loaders.index.parts import Part, cap_extras, numbered, part_of, shifted, steps_of
from loaders.index.pool import Scanner, scan_all
from loaders.index.previews import Previews, grown_previews, next_row
from loaders.index.served_frame import combine_served
from loaders.index.table import combine, length_cap
from loaders.index.work import Work, sized_for_run, work_for

MAX_STORED_PROBLEMS = 2000  # per file; the counts stay exact
__all__ = ["METRICS", "UNKNOWN", "refresh"]


def refresh(files: list[DumpFile], stored: Stored | None, progress: Progress | None = None,
            stale: Collection[str] = (), scan: Scanner | None = None, texts: bool = True
            ) -> tuple[Stored, str]:
    """The up-to-date index and the cache status: "hit", "partial" or "miss".

    Files named in `stale` (a sample read found their bytes changed) are parsed again whole.
    `scan` runs the chunk scans (pool.scan_all here; loaders.index.on_ray maps the same
    scan_chunk over a Ray cluster).  Without `texts` (a served `stored`: a followed run
    between saves), the rows kept are not given their texts again: the new rows are numbered
    from previews.next_row on, with their own texts, the kept ones keep their S.ROW.
    """
    old_files = stored.files if stored else {}
    places = functools.partial(stored_places, stored) if stored is not None else None
    works = sized_for_run([work for dump in files if (work := work_for(
        dump, None if dump.rel in stale else old_files.get(dump.rel), places)) is not None])
    tasks = bundled([c for w in works for c in w.chunks])
    # looked up at call time: the default is this module's scan_all as it is now
    results = (scan or scan_all)(tasks, progress, convert=table_of)
    bundles, by_file, dropped = split(results, {w.dump.rel: w.base.lines for w in works
                                                if w.base is not None})
    states, frames, problems = {}, [], []
    keep = {w.dump.rel for w in works if w.base is not None}
    if stored is not None:
        problems = [p for p in stored.problems if p["file"] in keep or p.get("index")]
    for work in works:
        state, found_frames, found = _apply(work, by_file.get(work.dump.rel, []))
        states[work.dump.rel] = state
        frames.extend((work.dump.rel, frame) for frame in found_frames)
        problems.extend(found)
    status = _status(stored, works, states)
    if status == "hit":
        return stored, status
    parts = in_file_order([w.dump.rel for w in works], frames + bundles)
    # the parts alone hold the rows now: combine lets each column go as it sorts it
    del results, bundles, by_file, frames
    changed = steps_of(parts) if stored is not None else None  # a first index has none
    frame = None
    if stored is not None:
        texts = texts or not stored.served
        left = _left_in_file(stored, parts, keep) if not texts and changed is not None else None
        if left is not None:  # a followed run between saves: only its last steps held
            counts = {f: len(found) for f, found in dropped.items()}
            problems = with_cap_notes(problems, counts, {w.dump.rel for w in works if w.chunks})
            return Stored(None, states, problems, left[1], left[0], frozenset(changed)), status
        if not texts:
            parts = numbered(parts, next_row(stored.frame))
            # a followed run between saves: its growth alone sorted, where it can be
            frame = appended(stored.frame, list(parts), keep) if changed is not None else None
        if changed is not None:
            changed |= _dropped_steps(stored.frame, keep)
        if frame is None:
            parts.insert(0, part_of(stored.rows_of(keep, texts)))
    fresh = _capped(parts, states, problems, dropped, works, frame, served=stored is None)
    if stored is not None and changed is not None and _same_rows_elsewhere(stored, fresh):
        fresh.changed_steps = frozenset(changed)
    return fresh, status


def _left_in_file(stored: Stored, parts: list[Part], keep: set[str]
                  ) -> tuple[GrownColumns, Previews] | None:
    """A growth of a run whose numbers are in its index file: the rows before its steps
    left there, the rest held (loaders.index.grown_columns), the new rows' texts layered
    on the run's; None where the growth changes more (the whole run is then made)."""
    if stored.held is not None or stored.numbers is None or stored.previews is None:
        return None
    first = next_row_of(stored.numbers)
    found = grown_columns(stored.numbers, numbered(parts, first), keep)
    if found is None:
        return None
    columns, made = found
    return columns, grown_previews(made, stored.previews, first)[1]


def _same_rows_elsewhere(stored: Stored, fresh: Stored) -> bool:
    """Rows a refresh kept read as they did: the run-level facts that shape every row (the
    length cap truncation is inferred from, the extra columns kept) did not move."""
    numbering = {S.ROW, S.KEY}  # made per run, not kept columns
    return (length_cap(fresh.frame) == length_cap(stored.frame)
            and set(stored.frame.columns) - numbering <= set(fresh.frame.columns))


def _dropped_steps(frame: pd.DataFrame, keep: set[str]) -> set[int]:
    """The steps of the stored rows a refresh lets go (their file re-parsed whole, or gone)."""
    if kept(frame, keep):  # every file kept: no pass over the rows
        return set()
    gone = ~frame[S.FILE].astype("string").isin(keep).to_numpy(dtype=bool)
    return set(frame.loc[gone, S.STEP].unique().tolist())


def _capped(parts: list[Part], states: dict[str, FileState], problems: list[dict],
            dropped: dict[str, set[str]], works: list[Work], frame: pd.DataFrame | None = None,
            served: bool = False) -> Stored:
    """The new index, its extra columns capped over the whole run, one note a file that
    lost some (in its worker, `dropped`, or here); `frame`: the run's rows already made of
    its parts (loaders.index.append), which then add no column to cap; `served`: a first
    index, made as a run serves it (served_frame.combine_served)."""
    capped, lost = cap_extras(parts) if frame is None else (parts, {})
    if capped is not parts:
        parts.clear()  # the caller's list: only `capped` holds the rows
    counts = {f: len(dropped.get(f, set()) | lost.get(f, set())) for f in {*dropped, *lost}}
    problems = with_cap_notes(problems, counts, {w.dump.rel for w in works if w.chunks})
    if frame is None and served:
        frame, previews = combine_served(capped)
        return Stored(frame, states, problems, previews)
    return Stored(combine(capped) if frame is None else frame, states, problems)


def _apply(work: Work, results: list[ChunkResult]
           ) -> tuple[FileState, list[Part], list[dict]]:
    base = work.base
    line_base = base.lines if base else 0
    bad = base.bad_lines if base else 0
    frames, problems = [], []
    if work.reason and base is None:
        problems.append({"file": work.dump.rel, "line": 0, "dropped": False,
                         "reason": work.reason})
    for result in results:
        if result.rows is not None and len(result.rows):  # a bundle's part has none
            frames.append(shifted(result.rows, line_base))
        for line, reason, dropped in result.problems:
            bad += dropped
            if len(problems) < MAX_STORED_PROBLEMS:
                problems.append({"file": work.dump.rel, "line": line + line_base,
                                 "reason": reason, "dropped": dropped})
        line_base += result.lines
    return _state(work, results, line_base, bad), frames, problems


def _state(work: Work, results: list[ChunkResult], lines: int, bad: int) -> FileState:
    base, stat = work.base, work.stat
    if not results and base is not None:
        if base.same_stat(stat):
            return base  # unchanged, or re-checked by content: the state stays as it was
        return replace(base, **stat_fields(stat, work.checked_ns))
    last = results[-1] if results else None
    parsed = last.parsed_until if last else 0
    try:
        head, tail, blocks = (last.hashes if last is not None and last.hashes
                              else content_hashes(work.dump.path, parsed))
    except OSError:  # gone or unreadable since: the next refresh will not trust this state
        head = tail = blocks = ""
    fields = stat_fields(stat, work.checked_ns) if stat is not None else {
        "size": 0, "mtime_ns": 0}
    return FileState(work.dump.rel, parsed_until=parsed, lines=lines, head_hash=head,
                     tail_hash=tail, block_hash=blocks, bad_lines=bad, format=work.format,
                     ends_mid_line=bool(last and last.ends_mid_line),
                     pending_bytes=last.pending_bytes if last else 0, **fields)


def _status(stored: Stored | None, works: list[Work], states: dict[str, FileState]) -> str:
    if stored is None or all(w.base is None for w in works):
        return "miss"
    if any(w.chunks for w in works) or not _same_states(states, stored.files):
        return "partial"
    return "hit"


def _same_states(new: dict[str, FileState], old: dict[str, FileState]) -> bool:
    """Equal, but for check times renewed after a content check: those alone are not worth
    rewriting the index (and losing a hit) for; they are saved with the next real change."""
    # `is` first: most states are the stored ones, and replace() costs ~20 us a file
    return new.keys() == old.keys() and all(
        state is old[rel] or state == old[rel]
        or replace(state, checked_ns=old[rel].checked_ns) == old[rel]
        for rel, state in new.items())
