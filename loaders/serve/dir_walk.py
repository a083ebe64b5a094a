"""A dump dir's one walk: its listing, its sub-runs and the formats they are in.

A Catalog walks its dir once (and again on refresh): every sub-run list, format check and
run load of a click reads this, never the disk.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loaders.find.kind import detect
from loaders.find.remote import is_url
from loaders.find.remote_walk import scan_url
from loaders.find.walk import Listing, scan, sub_runs


@dataclass(frozen=True)
class DirWalk:
    listing: Listing
    sub_runs: tuple[str, ...]
    error: str = ""  # why the dir could not be walked: every run of it says so
    # by sub-run, the formats its first files are in: sub-runs of different trainers are
    # different runs, never one curve
    formats: tuple[tuple[str, frozenset[str]], ...] = ()


def walk_dir(base: Path) -> DirWalk:
    """Walk base once (a URL: one listing of its prefix); a walk that fails is a DirWalk
    whose error every run of the dir reports."""
    try:
        walk = scan_url if is_url(base) else scan  # a URL: one listing of its prefix
        listing = walk(base) if base.is_dir() else Listing(base, (), ())
    except (OSError, RuntimeError) as err:  # RuntimeError: pathlib gave up on a symlink loop
        return DirWalk(Listing(base, (), ()), (), f"cannot walk {base}: {err}")
    runs = tuple(sub_runs(listing))
    return DirWalk(listing, runs, formats=_formats(listing, runs))


def _formats(listing: Listing, runs: tuple[str, ...],
             first: int = 3) -> tuple[tuple[str, frozenset[str]], ...]:
    heads: dict[str, list] = {run: [] for run in runs}
    for dump in listing.dumps:
        files = heads.get(Path(dump.rel).parent.as_posix())
        if files is not None and len(files) < first and dump.confined:
            files.append(dump)
    return tuple((run, frozenset(f for f in (detect(d.path, d.rel) for d in files) if f))
                 for run, files in heads.items())


def listing_of(path: Path, listing: Listing) -> Listing | None:
    """The part of the base's walk under path; None (walk path itself) when it is not part
    of that walk: outside the base, or inside a hidden dir the walk skipped."""
    if path == listing.root:
        return listing
    if listing.root not in path.parents:
        return None
    rel = path.relative_to(listing.root).as_posix()
    if any(part.startswith(".") for part in rel.split("/")):
        return None
    return listing.under(rel)
