"""Which format a dump file is in: its name first, its first record when the name is vague."""
from __future__ import annotations

from pathlib import Path

from loaders.formats import BY_NAME, by_keys, by_path
from loaders.parse.record import BadLine, parse_object

PEEK_BYTES = 8 << 20
# names these formats use are too common to trust without looking at the keys
_VAGUE = frozenset({"verl", "native"})


def _head(path: Path) -> bytes:
    """The file's start: enough for its first lines, without reading a huge file whole."""
    data = b""
    with open(path, "rb") as handle:
        while len(data) < PEEK_BYTES:
            block = handle.read(64 << 10)
            data += block
            if not block or data.count(b"\n") >= 3:
                break
    return data


def first_record(path: Path) -> dict | None:
    """The first parseable line (of the first few) of a jsonl file as a dict, or None."""
    try:
        data = _head(path)
    except OSError:
        return None
    for raw in data.split(b"\n")[:3]:
        if raw.strip():
            try:
                return parse_object(raw)
            except BadLine:
                continue
    return None


def detect(path: Path, rel: str) -> str | None:
    """The format name of one file, or None when it is in no known layout."""
    named = by_path(rel)
    if named is not None and (named.tabular or named.name not in _VAGUE):
        return named.name
    record = first_record(path)
    found = by_keys(record) if record is not None else None
    if found is not None:
        return found.name
    if record is None:
        # empty, still being written, or garbage: read it as its name says (or as the native
        # format) so that its lines are reported one by one rather than the file skipped
        return named.name if named is not None else "native"
    return None


__all__ = ["BY_NAME", "detect", "first_record"]
