"""Opening a dump dir as a Run: walked, its index read (or built, or grown) and kept."""
from __future__ import annotations

import time
from collections.abc import Collection
from pathlib import Path

from loaders.find.remote import RemoteError, as_path, is_url
from loaders.find.remote_walk import scan_url
from loaders.find.walk import Listing, scan
from loaders.formats import BY_NAME, no_known_format
from loaders.index.chunk import Progress
from loaders.index.index_file import save_kept
from loaders.index.numbers import served_numbers
from loaders.index.ondisk import index_dir, load_index
from loaders.index.pool import Scanner
from loaders.index.refresh import refresh
from loaders.serve.run import Run
from loaders.serve.run_health import metric_stamp, run_metric_files


class DumpError(Exception):
    """The dir cannot be opened as a dump; the message is one line for the user."""


def open_run(root: str | Path, use_cache: bool = True, progress: Progress | None = None,
             listing: Listing | None = None, stale: Collection[str] = (),
             scanner: Scanner | None = None) -> Run:
    """Load a dump dir through the on-disk index, parsing only what changed.

    `listing` is a walk of root already made (a Catalog walks its dir once for every run);
    files named in `stale` (relative to root) are parsed again whole, whatever their stats;
    `scanner` runs the chunk scans (None: the index's local pool; or a Ray cluster:
    loaders.index.on_ray).
    """
    started = time.perf_counter()
    try:  # a URL (s3://, gs://, hdfs://, …) is a RemotePath: loaders.find.remote
        root = as_path(root) if is_url(root) else Path(root).expanduser().resolve()
        if not root.is_dir():
            raise DumpError(f"no such directory: {root}")
    except RemoteError as err:
        raise DumpError(str(err)) from None
    if listing is None:
        try:
            listing = scan_url(root) if is_url(root) else scan(root)
        except (OSError, RuntimeError) as err:  # RuntimeError: pathlib gave up on a link loop
            raise DumpError(f"cannot walk {root}: {err}") from None
    elif listing.root != root:
        raise ValueError(f"listing of {listing.root} given for {root}")
    if not listing.dumps:
        raise DumpError(f"no .jsonl dump files under {root}")
    stored = load_index(root) if use_cache else None
    fresh, status = refresh(list(listing.dumps), stored, progress, stale=stale, scan=scanner)
    if all(state.format not in BY_NAME for state in fresh.files.values()):
        raise DumpError(no_known_format(sorted(fresh.files)))
    index_path, previews = None, fresh.previews
    if use_cache and status != "hit":
        index_path, previews = save_kept(root, fresh)
    elif use_cache:
        index_path = index_dir(root) / "index.parquet"
    numbers, previews = served_numbers(fresh.held, fresh.numbers, previews)
    # metric logs on object storage are not read (see loaders.find.remote_walk)
    metric_files = {} if is_url(root) else run_metric_files(root, listing.logs, fresh.files)
    return Run(root, numbers, fresh.files, fresh.problems, status,
               time.perf_counter() - started, index_path, metric_files,
               metric_stamp(root, metric_files), previews=previews)
