"""A loaded run brought up to date from its own frame and file states, not from the disk index.

Following a live run re-opens it every few seconds; reading the Parquet index back each time
would cost more than the few new lines.  The run in memory already is that index (its frame,
file states and problems), so only what changed on disk is parsed (loaders.index.refresh:
grown bytes, or a whole file rewritten or replaced under the board).  Saving the index
rewrites all of it, so the follower saves at most every so often (see saved()).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from loaders import schema as S
from loaders.find.walk import DumpFile, Listing, natural_key, rank_of
from loaders.index.chunk import ChunkResult, Progress, Task
from loaders.index.grown_columns import GrownColumns
from loaders.index.index_file import save_index, save_kept
from loaders.index.numbers import Numbers, served_numbers
from loaders.index.ondisk import Stored
from loaders.index.pool import scan_all, scan_inline
from loaders.index.previews import Previews, grown_previews, next_row
from loaders.index.refresh import refresh
from loaders.serve.carried import Carried
from loaders.serve.run import Run
from loaders.serve.run_health import metric_stamp, run_metric_files

# growth below this is parsed in this process: starting the parser worker processes takes
# seconds on a busy machine, longer than parsing a few steps a trainer appended
GROWTH_INLINE_BYTES = 256 << 20


def scan_growth(chunks: list[Task], progress: Progress | None = None,
                convert: Callable[[dict], object] = lambda columns: columns
                ) -> list[ChunkResult]:
    """loaders.index.pool.scan_all, but without worker processes for a live run's growth."""
    total = sum(chunk.nbytes for chunk in chunks)
    if total >= GROWTH_INLINE_BYTES:
        return scan_all(chunks, progress, convert)
    return scan_inline(chunks, total, progress, convert)


def _carried(run: Run, fresh: Stored, status: str) -> Carried | None:
    """The per-step tables the grown run takes over from run: all but those of the steps
    the growth touched (none at a hit, whose tables are run's own)."""
    if status == "hit":  # new metric files only: every table of the dump stands
        return Carried(frozenset(), run.made_tables())
    if fresh.changed_steps is None:
        return None
    return Carried(fresh.changed_steps, run.made_tables())


def _served(run: Run, stored: Stored, fresh: Stored, save: bool
            ) -> tuple[Numbers, Previews, Path | None]:
    """What the grown run serves: its index saved (read from the file), its last steps
    held beside the file (a growth in place: loaders.index.grown_columns), or held."""
    if not save and fresh.held is None and isinstance(fresh.numbers, GrownColumns):
        return Numbers(file=fresh.numbers), fresh.previews, run.index_path
    if save:
        path, previews = save_kept(run.root, fresh)
        return *served_numbers(fresh.frame, None, previews), path
    frame, previews = fresh.frame, fresh.previews
    if S.ROW in frame.columns:  # unsaved: only the new rows' previews held, numbered on
        frame, previews = grown_previews(frame, run.previews, next_row(stored.frame))
    return *served_numbers(frame, None, previews), run.index_path


def known_dumps(run: Run) -> list[DumpFile]:
    """The files the run indexed (dumps, metric jsonl and skipped ones), as a walk lists them."""
    rels = sorted(run.files, key=natural_key)
    return [DumpFile(run.root / rel, rel, rank_of(Path(rel).name), confined=False)
            for rel in rels]


def saved(run: Run) -> Path | None:
    """Write the run's index (frame, file states, problems) as the on-disk cache."""
    return save_index(run.root, _stored(run))


def _stored(run: Run) -> Stored:
    """The index as run holds it: its frame, or its numbers left in its index file."""
    numbers = run.numbers
    return Stored(numbers.held, run.files, run.problems, run.previews, numbers.file)


def grown(run: Run, listing: Listing | None = None, progress: Progress | None = None,
          save: bool = True) -> Run:
    """run with what changed on disk since it was indexed; run itself when nothing did.

    Without a listing only the files it already knows are looked at (a stat each, and a
    content check of those that changed or were written too recently for their stat to
    tell); with one (a fresh walk of run.root) new files are indexed and vanished ones left.
    Without `save` the index on disk is left as it was (a later saved() brings it up to
    date; until then a reopen parses the difference): rewriting it costs the whole index.
    """
    started = time.perf_counter()
    dumps = list(listing.dumps) if listing is not None else known_dumps(run)
    stored = _stored(run)
    fresh, status = refresh(dumps, stored, progress, stale=run.stale_files, scan=scan_growth,
                            texts=save)
    metric_files = (run_metric_files(run.root, listing.logs, fresh.files)
                    if listing is not None else run.metric_files)
    stamp = metric_stamp(run.root, metric_files)
    if status == "hit" and (metric_files, stamp) == (run.metric_files, run.metric_stamp):
        return run
    index_path, previews, numbers = run.index_path, run.previews, run.numbers
    if status != "hit":
        numbers, previews, index_path = _served(run, stored, fresh, save)
    return Run(run.root, numbers, fresh.files, fresh.problems, status,
               time.perf_counter() - started, index_path, metric_files, stamp,
               previews=previews,
               carried=_carried(run, fresh, status))
