"""What a file under the dump dir is: a dump in one of the trainer formats, a training-metric
log, or unknown.  Decided once per file, here: by its name where the name is specific, else
by a vote over its first records, so that one odd line never decides a whole file.
"""
from __future__ import annotations

import errno
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from loaders.find.remote import open_binary, stat_of
from loaders.formats import BY_NAME, FORMATS, Format, by_keys, by_path
from loaders.limits import OverBudget
from loaders.parse.record import BadLine, parse_object

UNKNOWN = "unknown"
METRICS = "metrics"  # a training-metric log beside the dumps: read by loaders.metrics
VOTE_LINES = 20  # records that vote on a file's format
VOTE_BYTES = 1 << 20  # read no further for the vote once a line is complete...
PEEK_BYTES = 8 << 20  # ...and never further than this, however long the first line
_BLOCK = 64 << 10
# `{global_step}.jsonl` (and AReaL's `rollout/{version}/{task_id}.jsonl`) are names many tools
# use: the records must confirm them
_VAGUE = frozenset({"verl", "areal"})
_KEYS_SHOWN = 12
_NAME_PARTS = 4  # the most path parts a format's name pattern spans (episodes/x/…)


@dataclass(frozen=True)
class Kind:
    format: str  # a loaders.formats name, METRICS or UNKNOWN
    reason: str = ""  # for the problem list: why a file is skipped, or how a vote was split


def _head(path: Path) -> bytes:
    """The file's start: up to VOTE_LINES full lines, at most VOTE_BYTES unless the first
    line is longer (then up to PEEK_BYTES); a line cut by the limit is left out."""
    blocks, size, newlines = [], 0, 0
    if not stat.S_ISREG(stat_of(path).st_mode):  # reading a FIFO would block forever
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    with open_binary(path) as handle:
        while size < PEEK_BYTES:
            block = handle.read(_BLOCK)
            if not block:
                return b"".join(blocks)  # end of file: a half-written last line fails to parse
            blocks.append(block)
            size += len(block)
            newlines += block.count(b"\n")
            if newlines >= VOTE_LINES or (newlines and size >= VOTE_BYTES):
                break
    data = b"".join(blocks)
    return data[: data.rfind(b"\n") + 1]


def head_records(path: Path) -> list[dict]:
    """The first parseable records of a jsonl file (up to VOTE_LINES); raises OSError."""
    records = []
    for raw in _head(path).split(b"\n"):
        if raw.strip():
            try:
                records.append(parse_object(raw))
            except BadLine:
                continue
            if len(records) == VOTE_LINES:
                break
    return records


def first_record(path: Path) -> dict | None:
    """The first parseable record of a jsonl file, or None (also when it cannot be read)."""
    try:
        records = head_records(path)
    except OSError:
        return None
    return records[0] if records else None


def _is_metrics(record: dict) -> bool:
    # imported here: loaders.metrics imports this module, so a top-level import would cycle
    from loaders.metrics.lines import from_json

    try:
        return from_json(record) is not None
    except OverBudget:  # it has a step (else from_json returns before nesting counts)
        return True  # a metric record; the metrics reader names it and leaves it out


def _ballot(record: dict) -> str | None:
    found = by_keys(record)
    if found is not None:
        return found.name
    return METRICS if _is_metrics(record) else None


def vote(records: list[dict], named: Format | None) -> Kind:
    """The format most of the records are in.  A dump format beats the metric log on a tie
    (its odd lines are then reported one by one instead of the file vanishing); among dump
    formats the name breaks a tie, then the more specific format."""
    if not records:
        # empty, still being written, or garbage: read it as its name says (or as the native
        # format) so that its lines are reported one by one rather than the file skipped
        return Kind(named.name if named is not None else "native")
    votes = Counter(_ballot(r) for r in records)
    dumps = {f.name: votes[f.name] for f in FORMATS if votes[f.name]}
    if dumps and sum(dumps.values()) >= votes[METRICS]:
        best = max(dumps.values())
        tied = [name for name, count in dumps.items() if count == best]
        return Kind(named.name if named is not None and named.name in tied else tied[0])
    if votes[METRICS]:
        note = "" if not dumps else (f"read as a training-metric log: {votes[METRICS]} of "
                                     f"{len(records)} records look like metrics ({_tally(dumps)})")
        return Kind(METRICS, note)
    keys = sorted({str(k) for r in records for k in r})
    shown = ", ".join(keys[:_KEYS_SHOWN]) + (", …" if len(keys) > _KEYS_SHOWN else "")
    return Kind(UNKNOWN, f"not in a known dump format (keys seen: {shown}); file skipped")


def _tally(dumps: dict[str, int]) -> str:
    return ", ".join(f"{count} like {name}" for name, count in dumps.items())


def _named(path: Path, rel: str) -> Format | None:
    """The format the file's name says.  A sub-run's rel starts below its dir, and some
    names need that dir (slime's rollout_data/3.pt): then the path's last parts decide."""
    found = by_path(rel)
    if found is None:
        found = by_path("/".join(str(path).rsplit("/", _NAME_PARTS)[-_NAME_PARTS:]))
    return found


def classify(path: Path, rel: str) -> Kind:
    """The kind of one file: a specific name decides, else a vote over its first records."""
    named = _named(path, rel)
    if named is not None and named.name not in _VAGUE:
        return Kind(named.name)
    try:
        records = head_records(path)
    except OSError as err:
        return Kind(UNKNOWN, f"cannot read: {err.strerror or err}; file skipped")
    return vote(records, named)


def detect(path: Path, rel: str) -> str | None:
    """The dump format of one file, or None when it is a metric log, a side file of a run
    (no sample of its own) or in no known layout."""
    found = classify(path, rel).format
    return found if found in BY_NAME and not BY_NAME[found].side else None


__all__ = ["BY_NAME", "METRICS", "UNKNOWN", "Kind", "classify", "detect", "first_record"]
