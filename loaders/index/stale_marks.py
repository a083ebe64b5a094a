"""Files a sample read found changed since they were indexed, remembered beside the index.

The index trusts a file by its stat and sampled hashes; an edit in place between the sampled
blocks passes both, and only a sample read (its line check) notices.  What it noticed is
written here, so that every later open parses those files again whole, in this process or
another (the CLI, a restarted board), until an index built after the mark replaces them.
A mark names the file and the check time of the state found stale: a state parsed since
has another check time, so an old mark never forces a second parse.
"""
from __future__ import annotations

from contextlib import suppress
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO, Protocol, TypeVar

import orjson

from loaders.index.cachedir import locate, read_index, replace_index

MARKS_NAME = "stale.json"
MAX_MARKS = 10_000  # a planted marks file forces re-parses at worst, and never a big read
_MAX_BYTES = 1 << 20


class _Checked(Protocol):
    checked_ns: int


State = TypeVar("State", bound=_Checked)  # a loaders.index.ondisk.FileState


def _read(handle: BinaryIO) -> dict[str, int]:
    try:
        marks = orjson.loads(handle.read(_MAX_BYTES))
    except orjson.JSONDecodeError:
        return {}
    if not isinstance(marks, dict):
        return {}
    return {rel: at for rel, at in list(marks.items())[:MAX_MARKS] if isinstance(at, int)}


def stale_marks(place: Path) -> dict[str, int]:
    """The marks kept in the cache dir `place`: file -> check time of its stale state."""
    try:
        return read_index(place, _read, MARKS_NAME) or {}
    except OSError:
        return {}


def mark_stale(root: Path, checked: dict[str, int]) -> None:
    """Remember that the states of these files (by their check time) are stale.  Best
    effort: where no cache dir can be written, only this process's runs know."""
    place = locate(root).path
    marks = {**stale_marks(place), **checked}
    with suppress(OSError):
        replace_index(place, lambda handle: handle.write(orjson.dumps(marks)), MARKS_NAME)


def marked(place: Path, checked: dict[str, int]) -> set[str]:
    """The files whose state (by check time, in `checked`) a mark says is stale."""
    marks = stale_marks(place) if checked else {}
    return {rel for rel, at in marks.items() if checked.get(rel) == at}


def without_marked(place: Path, states: dict[str, State]) -> dict[str, State]:
    """states, those a mark says are stale made untrustworthy: an impossible size, so their
    stat never matches, and no format, so their parsed part is never grown from."""
    stale = marked(place, {rel: state.checked_ns for rel, state in states.items()})
    return {rel: replace(state, size=-1, format="unknown") if rel in stale else state
            for rel, state in states.items()}
