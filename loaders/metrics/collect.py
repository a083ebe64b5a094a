"""Finding metric files in a run and merging them into one frame indexed by step."""
from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import pandas as pd

from loaders.find.kind import first_record
from loaders.find.paths import inside
from loaders.find.walk import EVENTS_PREFIX, LOG_SUFFIXES, natural_key, stat_fingerprint
from loaders.formats import by_keys
from loaders.limits import OverBudget
from loaders.metrics import lines
from loaders.metrics.tensorboard import read_events

TIME = "time"  # wall-clock seconds, when a source records it
_MARKERS = ("step:", "metrics_tag")


@dataclass
class MetricFrame:
    frame: pd.DataFrame  # index: step; one column per metric (+ TIME when known)
    sources: dict[str, str] = field(default_factory=dict)  # file -> source kind
    notes: list[str] = field(default_factory=list)  # what could not be read, and why

    @property
    def names(self) -> list[str]:
        return [c for c in self.frame.columns if c != TIME]

    @property
    def empty(self) -> bool:
        return self.frame.empty


def _kind(path: Path) -> str | None:
    name = path.name
    if name.startswith(EVENTS_PREFIX):
        return "tensorboard"
    if name.endswith(LOG_SUFFIXES):
        return "log"
    if name.endswith(".jsonl"):
        record = first_record(path)
        try:
            if record is not None and by_keys(record) is None and lines.from_json(record):
                return "jsonl"
        except OverBudget:  # a first record nested past the budget: not read as metrics
            return None
    return None


def _walk(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    paths = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        paths += [Path(dirpath) / name for name in filenames
                  if _inside(Path(dirpath) / name, root)]
    return sorted(paths, key=lambda p: natural_key(str(p)))


def _inside(path: Path, root: Path) -> bool:
    try:
        return inside(path, root)
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop, which leads nowhere
        return False


def find_metric_files(*roots: Path, exclude: frozenset[Path] = frozenset()
                      ) -> dict[Path, str]:
    """Metric files under the given dirs (or files), recursively, with their kind.

    `exclude` names files already known to be dumps, so they are not even peeked at.
    """
    found = {}
    for root in roots:
        for path in _walk(root):
            if path in exclude:
                continue
            kind = _kind(path)
            if kind:
                found[path] = kind
    return found


def known_metric_files(logs: Iterable[Path], jsonl: Iterable[Path]) -> dict[Path, str]:
    """Metric files from a walk already made (loaders.find.walk.scan): logs and event files
    by name, plus the .jsonl files the index already classified, in find_metric_files order."""
    found = {path: kind for path in logs if (kind := _kind(path)) in ("log", "tensorboard")}
    found.update((path, "jsonl") for path in jsonl)
    return dict(sorted(found.items(), key=lambda item: natural_key(str(item[0]))))


def _points(path: Path, kind: str, notes: list[str]) -> list[lines.Point]:
    if kind == "tensorboard":
        return read_events(path, notes)
    dropped: list[str] = []
    over: list[str] = []  # why each record past a budget was left out
    try:
        with _open_regular(path) as handle:
            points = _read_points(handle, kind, dropped, over)
    except OSError as err:
        notes.append(f"{path}: not read ({_why(err)})")
        return []
    if dropped:
        names = ", ".join(_shown(name) for name in list(dict.fromkeys(dropped))[:3])
        notes.append(f"{path}: {len(dropped):,} value(s) too large for a number left out "
                     f"({names})")
    if over:
        notes.append(f"{path}: {len(over):,} record(s) left out ({over[0]})")
    return points


def _open_regular(path: Path) -> BinaryIO:
    """The file, opened for reading, when it is a regular file; OSError otherwise.

    O_NONBLOCK: a FIFO (listed by the walk, or swapped in since) must not block the open,
    and the fstat of the opened descriptor refuses it, so no check-then-open race is left.
    A device such as /dev/zero would never end: refused the same way."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _shown(name: str, limit: int = 60) -> str:
    return name if len(name) <= limit else name[:limit] + "…"


def _why(err: OSError) -> str:
    if isinstance(err, FileNotFoundError):
        return "it was removed after it was found"
    if err.errno == errno.ELOOP:
        return "a symlink loop"
    return err.strerror or str(err)


def _read_points(handle: BinaryIO, kind: str, dropped: list[str], over: list[str]
                 ) -> list[lines.Point]:
    points = []
    for raw in handle:
        try:
            point = _point(raw, kind, dropped)
        except OverBudget as err:  # this record is left out; the file's note says why
            over.append(str(err))
            continue
        if point:
            points.append(point)
    return points


def _point(raw: bytes, kind: str, dropped: list[str]) -> lines.Point | None:
    if kind == "jsonl":
        return _json_point(raw, dropped)
    text = raw.decode("utf-8", errors="replace")
    if not any(m in text for m in _MARKERS):
        return None
    return lines.from_roll(text, dropped) or lines.from_console(text.rstrip("\n"))


def _json_point(raw: bytes, dropped: list[str]) -> lines.Point | None:
    try:
        return lines.from_json(lines.parse_object(raw.strip()), dropped)
    except OverBudget:
        raise
    except ValueError:  # a bad line, or an int too long for Python to convert at all
        return None


def metrics_fingerprint(files: dict[Path, str]) -> str:
    """Changes when any metric file changes (a live run appends to them)."""
    return stat_fingerprint((str(path), path) for path in files)


def load_metrics(*roots: Path, exclude: frozenset[Path] = frozenset(),
                 files: dict[Path, str] | None = None) -> MetricFrame:
    """Every metric of every source under the roots, one row per step (later values win)."""
    notes: list[str] = []
    files = find_metric_files(*roots, exclude=exclude) if files is None else files
    rows = []
    for path, kind in files.items():
        for step, when, values in _points(path, kind, notes):
            rows.append({"step": step, **({TIME: when} if when is not None else {}), **values})
    if not rows:
        return MetricFrame(pd.DataFrame(index=pd.Index([], name="step")),
                           {str(p): k for p, k in files.items()}, notes)
    frame = pd.DataFrame(rows).groupby("step", sort=True).last()
    return MetricFrame(frame, {str(p): k for p, k in files.items()}, notes)
