"""Finding dump files under a directory, in natural order."""
from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from loaders.find.kind import detect

CACHE_DIR_NAME = ".rl_board_cache"
DUMP_SUFFIX = ".jsonl"
# TRL's completions and the board's own Parquet dumps (loaders/writer/parquet.py)
_TABLE_DUMP = re.compile(r"(^|/)(completions_\d+|rollout_data_rank_?(val_?)?\d+\.step_\d+\.\d+)"
                         r"\.parquet$"
                         # slime's torch.save debug dumps (loaders.formats.slime), ART's
                         # trajectory Parquet files and rLLM's episode files (.formats.episodes)
                         r"|(^|/)(rollout|train)_data/(eval_)?\d+(_\d+)?\.pt$"
                         r"|(^|/)trajectories/[^/]+/\d+\.parquet$"
                         r"|(^|/)((train|val)_step_\d+_epoch_\d+|episodes)/episode_[^/]*\.json$")
# prime-rl writes token_exports/step_N/ and (in newer versions) touches STABLE there once
# every rank has flushed; when any step has the marker, steps without it are still being written
STABLE_MARKER = "STABLE"
LOG_SUFFIXES = (".log", ".txt", ".out", ".err")  # training logs that may hold metric lines
EVENTS_PREFIX = "events.out.tfevents."
_RANK = re.compile(r"rank[_-]?(?:val[_-]?)?(\d+)", re.IGNORECASE)
_DIGITS = re.compile(r"(\d+)")


@dataclass(frozen=True)
class DumpFile:
    path: Path
    rel: str  # path relative to the dump dir, with forward slashes
    rank: int  # -1 when the file name carries no rank
    # False for a link out of the dump dir (listed so that it is reported, never read) and
    # for a file not from a walk just made (a followed run's known files: it may have become
    # such a link since); the index checks these before it reads them (see escapes)
    confined: bool = True


def escapes(dump: DumpFile) -> bool:
    """The file is now a link whose target is outside the dir it was found in: the walk's
    check, for a file listed before (an lstat; a realpath only for a link)."""
    path = dump.path
    if not isinstance(path, Path) or not path.is_symlink():  # a URL has no links
        return False
    top = path
    for _ in dump.rel.split("/"):
        top = top.parent
    return not _within(str(path), os.path.realpath(top))


def natural_key(text: str) -> tuple:
    """Sort key under which rank_2 comes before rank_10."""
    return tuple(int(p) if p.isdigit() else p.lower() for p in _DIGITS.split(text))


def rank_of(name: str) -> int:
    """The data-parallel rank in a file name such as rollout_data_rank_3.jsonl, else -1."""
    match = _RANK.search(name)
    return int(match.group(1)) if match else -1


def _named(rel: str) -> bool:
    try:
        rel.encode("utf-8")  # names that are not UTF-8 cannot be shown or indexed
    except UnicodeEncodeError:
        return False
    return True


def _within(path: str, real_root: str) -> bool:
    """A link's target stays under real_root.  A link in a loop resolves to itself (the
    refresh then reports it as unreadable); realpath never raises on one, unlike resolve."""
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip("/") + "/")


def _kept(path: Path, real_root: str) -> bool:
    return not path.is_symlink() or _within(str(path), real_root)


def stat_fingerprint(files: Iterable[tuple[str, Path]]) -> str:
    """"name:size:mtime" of each (name, path) that still exists: changes when any file does."""
    parts = []
    for name, path in files:
        try:
            stat = path.stat()
        except OSError:
            continue
        parts.append(f"{name}:{stat.st_size}:{stat.st_mtime_ns}")
    return "|".join(parts)


def _stable_steps(here: Path, dirnames: list[str]) -> list[str]:
    stable = [d for d in dirnames if (here / d / STABLE_MARKER).exists()]
    return stable if stable else dirnames


def is_metric_name(name: str) -> bool:
    """Training logs and TensorBoard event files, told apart by name alone (no peek)."""
    return name.startswith(EVENTS_PREFIX) or name.endswith(LOG_SUFFIXES)


@dataclass(frozen=True)
class Listing:
    """One walk of a dir: its dump files and, found by the same walk, its metric logs.

    Metric .jsonl files are among the dumps: the index tells them apart when it peeks.
    """
    root: Path
    dumps: tuple[DumpFile, ...]
    logs: tuple[Path, ...]  # is_metric_name files, in natural order

    def under(self, rel_dir: str) -> Listing:
        """The same walk seen from a sub-dir, as if that dir had been walked itself."""
        sub = self.root / rel_dir
        prefix = rel_dir.rstrip("/") + "/"
        real_sub = os.path.realpath(sub) if isinstance(sub, Path) else ""  # a URL: no links
        dumps = [DumpFile(d.path, d.rel[len(prefix):], d.rank,
                          d.confined and _kept(d.path, real_sub))
                 for d in self.dumps if d.rel.startswith(prefix)]
        logs = [p for p in self.logs if sub in p.parents and _kept(p, real_sub)]
        return Listing(sub, tuple(sorted(dumps, key=lambda f: natural_key(f.rel))), tuple(logs))


def scan(root: Path) -> Listing:
    """Walk root once, recursively, skipping hidden dirs (and so the cache) and prime-rl
    steps not yet marked STABLE: every *.jsonl (and TRL completions_*.parquet) and log.

    Links to dirs are not followed (so no dir loop is walked); a linked file counts when its
    target stays inside root (one that leaves it is listed unconfined: the refresh names it
    as a problem, never reading it).  A file that is a FIFO or a link in a loop is listed all
    the same, so the refresh names it as a problem instead of it vanishing.
    """
    dumps, logs = [], []
    real_root = os.path.realpath(root)
    # a name pattern may span the root's own dirs (slime's rollout_data/3.pt, walked from
    # rollout_data/): matched with them in front
    named_from = "/".join(Path(root).absolute().parts[-3:]) + "/"
    todo = [(Path(root), "")]
    while todo:  # a stack, not recursion: a deep tree must not exhaust Python's stack
        here, prefix = todo.pop()
        subdirs, files = _entries(here)
        if here.name == "token_exports":
            subdirs = _stable_steps(here, subdirs)
        todo.extend((here / d, f"{prefix}{d}/") for d in reversed(subdirs))
        names = {name for name, _ in files}
        for name, link in files:
            rel = prefix + name
            dump = name.endswith(DUMP_SUFFIX) or bool(_TABLE_DUMP.search(named_from + rel))
            if not (dump or is_metric_name(name)) or not _named(rel) or _side_file(name, names):
                continue
            confined = not link or _within(str(here / name), real_root)
            if dump:
                dumps.append(DumpFile(here / name, rel, rank_of(name), confined))
            elif confined:
                logs.append(here / name)
    return Listing(root, tuple(sorted(dumps, key=lambda f: natural_key(f.rel))),
                   tuple(sorted(logs, key=lambda p: natural_key(str(p)))))


def _side_file(name: str, names: set[str]) -> bool:
    """A file a dump writes beside its samples that holds none: open-instruct's run metadata
    (open_instruct/rl_utils.py `save_rollout_metadata`) next to its first rollout shard."""
    run = name.removesuffix(_META)
    return run != name and f"{run}_rollouts_000000.jsonl" in names


_META = "_metadata.jsonl"


def _entries(here: Path) -> tuple[list[str], list[tuple[str, bool]]]:
    """(dirs to walk, (file name, is a link) pairs) of one dir, hidden names left out.  A link
    to a dir is neither; a dir that cannot be listed (gone, no permission) has neither."""
    dirs, files = [], []
    try:
        with os.scandir(here) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                link = entry.is_symlink()
                if entry.is_dir(follow_symlinks=False):
                    dirs.append(entry.name)
                elif not (link and _is_dir(entry)):
                    files.append((entry.name, link))
    except OSError:
        pass
    return sorted(dirs), files


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()  # follows the link; a loop or broken link is not a dir
    except OSError:
        return False


def discover(root: Path) -> list[DumpFile]:
    """Every dump file under root, in natural order (see scan), links out of it left out."""
    return [dump for dump in scan(root).dumps if dump.confined]


def sub_runs(listing: Listing, limit: int = 500) -> list[str]:
    """Dirs of the listing (its root as '.') that directly hold dump files: the sub-runs.

    A dir counts when one of its first files is in a known dump format (so a logs/ dir of
    training metrics is not offered as a run).
    """
    by_dir: dict[str, list[DumpFile]] = {}
    for dump in (d for d in listing.dumps if d.confined):  # never peek through a link out
        by_dir.setdefault(Path(dump.rel).parent.as_posix(), []).append(dump)
    dirs = [d for d, files in by_dir.items()
            if any(detect(f.path, f.rel) for f in files[:3])]
    return sorted(dirs, key=natural_key)[:limit]


def dump_dirs(root: Path, limit: int = 500) -> list[str]:
    """The sub-runs of root, from a fresh walk (the board keeps one in loaders.serve.catalog)."""
    return sub_runs(scan(root), limit)
