"""Byte-range chunks of dump files, bundles of small ones, and what parsing one yields."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import BinaryIO, NamedTuple

import numpy as np

from loaders import schema as S
from loaders.find.remote import open_binary
from loaders.formats import BY_NAME
from loaders.index import kernel
from loaders.index.extras import kept_extras

CHUNK_BYTES = 16 << 20
# a file this small costs more in fixed costs (a task, a batch, a frame) than in parsing,
# so such chunks are scanned together, up to BUNDLE_BYTES a task
SMALL_CHUNK_BYTES = 1 << 20
BUNDLE_BYTES = 4 << 20
# a tabular file's bytes are no parse: a board Parquet file's footer may hold its summary
# (1-2 ms a file, against 1-2 ms of a worker task's own costs), so up to 4 MB files (read
# whole by their scan) go in bundles of 16 MB
SMALL_TABULAR_BYTES, BUNDLE_TABULAR_BYTES = 4 << 20, 16 << 20


@dataclass(frozen=True)
class Chunk:
    path: str
    rel: str
    rank: int
    start: int
    end: int
    continues_line: bool = False  # first bytes finish a line that an earlier parse accepted
    format: str = "native"  # a loaders.formats name

    @property
    def nbytes(self) -> int:
        return self.end - self.start

    @property
    def tabular(self) -> bool:
        """A columnar file's chunk (Parquet): its bytes are no lines to parse."""
        known = BY_NAME.get(self.format)
        return known is not None and known.tabular


@dataclass(frozen=True)
class Bundle:
    """Small chunks, each the only one of its file, scanned as one task into one batch."""
    parts: tuple[Chunk, ...]

    @property
    def path(self) -> str:  # the first part's, for whoever watches what is scanned
        return self.parts[0].path

    @property
    def nbytes(self) -> int:
        return sum(part.nbytes for part in self.parts)


Task = Chunk | Bundle


@dataclass
class ChunkResult:
    chunk: Task
    rows: object = None  # Columns from the worker; the caller may convert them
    problems: list[tuple[int, str, bool]] = field(default_factory=list)  # (line, reason, dropped)
    lines: int = 0
    parsed_until: int = 0
    ends_mid_line: bool = False
    pending_bytes: int = 0
    nrows: int = 0  # rows this chunk added (to its bundle's batch, for a bundle's part)
    parts: list[ChunkResult] = field(default_factory=list)  # a bundle's, whose rows they hold
    dropped: dict[str, list[str]] = field(default_factory=dict)  # by file: see columns_of
    # content hashes of [0, parsed_until), when the scan read all of it (a whole small file)
    hashes: tuple[str, str, str] | None = None


def bundled(chunks: list[Chunk]) -> list[Task]:
    """The tasks that scan these chunks: small ones, each the only chunk of its file, in
    bundles of about BUNDLE_BYTES (in order, after the others: the big ones start first)."""
    per_file = Counter(chunk.rel for chunk in chunks)
    small = [c for c in chunks if c.nbytes <= _limits(c)[0] and per_file[c.rel] == 1]
    if len(small) < 2:
        return list(chunks)
    rels = {c.rel for c in small}
    tasks: list[Task] = [c for c in chunks if c.rel not in rels]
    group: list[Chunk] = []
    size = 0
    for chunk in small:
        group.append(chunk)
        size += chunk.nbytes
        if size >= _limits(chunk)[1]:
            tasks.append(Bundle(tuple(group)))
            group, size = [], 0
    if group:
        tasks.append(Bundle(tuple(group)) if len(group) > 1 else group[0])
    return tasks


def _limits(chunk: Chunk) -> tuple[int, int]:
    """(the most bytes of a small chunk, a bundle's bytes) for the chunk's kind of file."""
    return ((SMALL_TABULAR_BYTES, BUNDLE_TABULAR_BYTES) if chunk.tabular
            else (SMALL_CHUNK_BYTES, BUNDLE_BYTES))


def plan_chunks(path: str, rel: str, rank: int, start: int, size: int,
                continues_line: bool = False, target: int = CHUNK_BYTES,
                fmt: str = "native") -> list[Chunk]:
    """Split [start, size) at newlines into chunks of about `target` bytes.  Raises OSError
    when the file cannot be opened (the caller lists it as a problem, unparsed)."""
    bounds = [start]
    step = _even_step(size - start, target)
    with open_binary(path) as handle:
        aim = start + step
        while aim < size:  # aims at fixed strides, so a chunk is a step +- one line
            pos = _next_line_start(handle, aim, size)
            if pos >= size:
                break
            bounds.append(pos)
            aim = start + ((pos - start) // step + 1) * step
    bounds.append(size)
    return [Chunk(path, rel, rank, a, b, continues_line and a == start, fmt)
            for a, b in zip(bounds, bounds[1:]) if b > a]


def _even_step(nbytes: int, target: int) -> int:
    """The size of each of the fewest chunks of at most `target` bytes that cover nbytes:
    a 25-MB file is two of 12.5 MB, not 16 and 9, so no core waits on a big last chunk."""
    count = max(1, -(-nbytes // target))
    return max(1, -(-nbytes // count))


def _next_line_start(handle: BinaryIO, pos: int, size: int) -> int:
    """Where the first line after pos starts.  Read 64 kB first, then 1 MB at a time: a
    line is a few kB (a long run's boundaries cost a 1-MB read each, 0.2 s of the main
    process before the workers started), and a URL's byte range is a request a read."""
    handle.seek(pos)
    step = 64 << 10
    while pos < size:
        block = handle.read(step)
        if not block:
            break
        cut = block.find(b"\n")
        if cut >= 0:
            return pos + cut + 1
        pos += len(block)
        step = 1 << 20
    return size


class Coded(NamedTuple):
    """A text column of few distinct values: a code per row into `texts` (None: -1)."""
    codes: np.ndarray
    texts: list[str]


Columns = dict[str, list | np.ndarray | Coded]  # summary columns, numbers as numpy arrays
# text columns that hold a few values over many rows (a file name, a group key, a reason),
# or one a GRPO group (its prompt): sent as codes, not as a string a row
_CODED = (S.FILE, S.GROUP_SOURCE, S.EXCLUDED_BY, S.TOOL_NAMES, S.LAST_FINISH, S.PROMPT,
          S.GROUND_TRUTH)


def coded(values: list) -> list | Coded:
    """A text column as codes when that is at most half as many texts; else as it is."""
    fast = kernel.codes(values)
    if fast is not None:
        return values if fast is False else Coded(*fast)
    if len(values) > 1 and values[0].__class__ is str and values.count(values[0]) == len(
            values):  # one text in every row (a file, a group source): no dict a row
        return Coded(np.zeros(len(values), np.int32), [values[0]])
    texts = dict.fromkeys(values)
    if len(texts) * 2 > len(values) or not all(t.__class__ is str for t in texts if t):
        return values
    texts.pop(None, None)
    index = {text: i for i, text in enumerate(texts)}
    index[None] = -1
    return Coded(np.fromiter(map(index.__getitem__, values), np.int32, len(values)),
                 list(texts))


def columns_of(cols: Columns) -> tuple[Columns, dict[str, list[str]]]:
    """A batch's summary columns as sent to the main process (which makes them a frame in
    one step: loaders.index.parts.table_of).

    At most MAX_EXTRA_COLUMNS extra columns (see extras.kept_extras): one line of 200,000
    keys would otherwise cost 200,000 columns of every row.  Also, by file, the extra
    columns left out (they stay in the line, and a token array among them in the tokens).
    """
    extra = [name for name in cols if name not in S.SUMMARY_DTYPES]
    dropped: dict[str, list[str]] = {}
    if len(extra) > S.MAX_EXTRA_COLUMNS:
        gone = set(extra).difference(kept_extras(extra))
        dropped = _dropped_by_file(cols, gone)
        cols = {name: values for name, values in cols.items() if name not in gone}
    for name in _CODED:
        if isinstance(cols.get(name), list):
            cols[name] = coded(cols[name])
    return cols, dropped


def _dropped_by_file(cols: Columns, gone: set[str]
                     ) -> dict[str, list[str]]:
    found: dict[str, set[str]] = {}
    files = cols[S.FILE]
    for name in gone:
        for file, value in zip(files, cols[name]):
            if value is not None:
                found.setdefault(file, set()).add(name)
    return {file: sorted(names) for file, names in found.items()}


Progress = Callable[[int, int], None]  # (bytes done, bytes total)
