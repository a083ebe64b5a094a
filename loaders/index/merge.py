"""Scan results -> the rows and problems of a refreshed index.

Bundles are split back into their files, and a file whose extra keys did not all become
columns (see extras.kept_extras) gets one problem saying how many.
"""
from __future__ import annotations

import re
from collections.abc import Collection

import numpy as np

from loaders import schema as S
from loaders.index.chunk import Bundle, ChunkResult
from loaders.index.parts import Part, shifted

_CAP_NOTE = re.compile(r"^(\d+) extra keys beyond the first \d+ are not columns")


Tagged = tuple[str, Part]  # a part and the file its first rows come from


def split(results: list[ChunkResult], line_bases: dict[str, int]
          ) -> tuple[list[Tagged], dict[str, list[ChunkResult]], dict[str, set[str]]]:
    """(frames of the bundles, results by file, extra columns dropped by file).

    A bundle's rows are one frame; each part is the only chunk of its file, so its line
    numbers start at the file's line base (its lines indexed before), added here in one go.
    Other results keep their rows, for the caller to number along their file.
    """
    frames, by_file, dropped = [], {}, {}
    for result in results:
        for file, names in result.dropped.items():
            dropped.setdefault(file, set()).update(names)
        if not isinstance(result.chunk, Bundle):
            by_file.setdefault(result.chunk.rel, []).append(result)
            continue
        for part in result.parts:
            by_file.setdefault(part.chunk.rel, []).append(part)
        if len(result.rows):
            bases = [line_bases.get(part.chunk.rel, 0) for part in result.parts]
            lines = np.repeat(bases, [part.nrows for part in result.parts])
            frames.append((result.parts[0].chunk.rel, shifted(result.rows, lines)))
    return frames, by_file, dropped


def in_file_order(files: list[str], frames: list[Tagged]) -> list[Part]:
    """The frames in the order of their (first) files, so extra columns come in the order
    a file-by-file parse meets them, whatever the bundles."""
    position = {rel: i for i, rel in enumerate(files)}
    return [frame for _, frame in sorted(frames, key=lambda item: position[item[0]])]


def cap_note(count: int) -> str:
    return (f"{count} extra keys beyond the first {S.MAX_EXTRA_COLUMNS} are not columns "
            "(they stay in the line; token arrays among them still show as tokens)")


def with_cap_notes(problems: list[dict], dropped: dict[str, int], parsed: Collection[str]
                   ) -> list[dict]:
    """problems with one cap note per file that lost extra columns.  A file parsed again
    counts what this parse dropped (at least what it counted before, for new bytes of a
    grown file); a file kept as indexed adds the columns the run dropped now."""
    dropped = {file: count for file, count in dropped.items() if count}
    if not dropped:
        return problems
    before = {p["file"]: int(m.group(1)) for p in problems
              if p["file"] in dropped and (m := _CAP_NOTE.match(p["reason"]))}
    out = [p for p in problems if not (p["file"] in before and _CAP_NOTE.match(p["reason"]))]
    for file, count in dropped.items():
        old = before.get(file, 0)
        total = max(old, count) if file in parsed else old + count
        out.append({"file": file, "line": 0, "reason": cap_note(total), "dropped": False})
    return out
