"""Scanning a byte range of a jsonl dump into summary rows."""
from __future__ import annotations

from collections.abc import Iterator

from loaders import schema as S
from loaders.find.remote import open_binary
from loaders.formats import samples_of
from loaders.formats.context import FileContext, context_of
from loaders.index.chunk import Chunk, ChunkResult
from loaders.index.hashes import data_hashes
from loaders.index.summary import SummaryBatch
from loaders.parse.record import BadLine, line_check, parse_object
from loaders.parse.repair import problems_of


def scan_jsonl(chunk: Chunk, batch: SummaryBatch) -> ChunkResult:
    """Parse one chunk of lines into the batch; line numbers are relative to the chunk's
    first line.  The result holds everything but the rows, which the batch collects."""
    result = ChunkResult(chunk, parsed_until=chunk.end)
    context = context_of(chunk.rel, chunk.rank)
    try:
        with open_binary(chunk.path) as handle:  # a local file or a URL's byte range
            handle.seek(chunk.start)
            data = handle.read(chunk.end - chunk.start)
    except OSError as err:
        result.problems.append((0, f"cannot read: {err.strerror}", False))
        result.parsed_until = chunk.start
        return result
    for offset, raw, terminated in _lines(data, chunk.continues_line):
        line = result.lines + 1
        where = {S.FILE: chunk.rel, S.LINE: line, S.RANK: chunk.rank,
                 S.OFFSET: chunk.start + offset, S.NBYTES: len(raw),
                 S.LINE_CHECK: line_check(raw)}
        if not terminated and not _accept_unterminated(raw, result, chunk.start + offset):
            break
        result.lines = line
        if raw.strip():
            _add(batch, raw, where, result, chunk.format, context)
    if chunk.start == 0:  # the whole parsed part is in hand: no second read to hash it
        result.hashes = data_hashes(data, result.parsed_until)
    return result


def _lines(data: bytes, skip_first: bool) -> Iterator[tuple[int, bytes, bool]]:
    """(offset, line, terminated) per line; slices one line at a time to keep memory flat."""
    offset, size = 0, len(data)
    if skip_first:
        cut = data.find(b"\n")
        offset = size if cut < 0 else cut + 1
    while offset < size:
        cut = data.find(b"\n", offset)
        if cut < 0:
            yield offset, data[offset:], False
            return
        yield offset, data[offset:cut], True
        offset = cut + 1


def _accept_unterminated(raw: bytes, result: ChunkResult, offset: int) -> bool:
    """A last line without newline counts only once it parses; otherwise it is pending."""
    try:
        parse_object(raw)
    except BadLine:
        result.parsed_until = offset
        result.pending_bytes = len(raw)
        return False
    result.ends_mid_line = True
    return True


def add_record(batch: SummaryBatch, record: dict, where: dict, result: ChunkResult,
               fmt: str, context: FileContext) -> None:
    """Every sample of one stored record into the batch; unusable ones become problems."""
    line = where[S.LINE]
    kept = False
    for item, sample in enumerate(samples_of(record, fmt, context)):
        if isinstance(sample, BadLine):
            result.problems.append((line, str(sample), True))
            continue
        kept = True
        batch.add(sample, {**where, S.ITEM: item},
                  lambda reason: result.problems.append((line, reason, False)))
    if kept:  # what parsing repaired (a lone surrogate, say) is a problem of a kept line
        result.problems.extend((line, reason, False) for reason in problems_of(record))


def _add(batch: SummaryBatch, raw: bytes, where: dict, result: ChunkResult, fmt: str,
         context: FileContext) -> None:
    try:
        record = parse_object(raw)
    except BadLine as err:
        result.problems.append((where[S.LINE], str(err), True))
        return
    add_record(batch, record, where, result, fmt, context)
