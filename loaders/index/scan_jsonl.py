"""Scanning a byte range of a jsonl dump into summary rows."""
from __future__ import annotations

import numpy as np
import orjson

from loaders import schema as S
from loaders.find.remote import open_binary
from loaders.formats import AS_WRITTEN, is_plain, samples_of
from loaders.formats.context import FileContext, context_of
from loaders.index import lines
from loaders.index.chunk import CHUNK_BYTES, Chunk, ChunkResult
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
    pos = 0
    if chunk.continues_line:
        cut = data.find(b"\n")
        pos = len(data) if cut < 0 else cut + 1
    view = memoryview(data)  # lines as views: no copy of the chunk's bytes
    plain = chunk.format in AS_WRITTEN  # a line is a sample as it stands: no normalising
    misses = 0 if plain and lines.available() else _MISSES  # runs of plain lines, in C
    while pos < len(data):
        if misses < _MISSES:
            block = lines.read_block(data, pos, BLOCK_SAMPLES, BLOCK_BYTES)
            if block is not None:
                batch.add_block(block, _where(block, chunk, result.lines, view),
                                result.problems)
                result.lines += block.lines
                pos, misses = block.end, 0
                continue
            misses += 1  # this line is read below, as every line was before
        cut = data.find(b"\n", pos)
        raw = view[pos:] if cut < 0 else view[pos:cut]
        if cut < 0 and not _accept_unterminated(bytes(raw), result, chunk.start + pos):
            break
        result.lines += 1
        if data[pos:pos + 1] == b"{" or bytes(raw).strip():
            where = (chunk.rel, result.lines, chunk.rank, chunk.start + pos, len(raw),
                     line_check(raw), 0)
            try:
                record = _loads(raw)
            except ValueError:
                record = None
            if plain and record.__class__ is dict and is_plain(record):
                batch.add(record, where, result.problems)
            else:
                _add(batch, raw, record, where, result, chunk.format, context)
        pos = len(data) if cut < 0 else cut + 1
    if chunk.start == 0:  # the whole parsed part is in hand: no second read to hash it
        result.hashes = data_hashes(data, result.parsed_until)
    return result


_MISSES = 8  # lines in a row that are no plain run: the rest of the chunk is read line by line
# A run of lines read in C (lines.py) is columns, about the lines' own bytes, not the 3-5x
# of parsed dicts that summary.FLUSH_BYTES bounds, so a chunk's plain lines are one block:
# a batch's ~100 numpy calls and its table are paid once a chunk, not once every 4 MB (a
# 16-token sample costs 3 % less, a 512- or 1,024-token one 5 %; a worker holds ~10 MB more;
# a small run's chunks are half as big again: work.sized_for_run)
BLOCK_SAMPLES, BLOCK_BYTES = 16384, 2 * CHUNK_BYTES


def _where(block: lines.Block, chunk: Chunk, before: int, view: memoryview) -> dict:
    """WHERE's columns of a block's samples; `before`: the chunk's lines read before it."""
    n = len(block)
    checks = block.checks
    if checks is None:
        spans = zip(block.starts.tolist(), block.ends.tolist())
        checks = np.fromiter((line_check(view[s:e]) for s, e in spans), np.int64, n)
    return {S.FILE: [chunk.rel] * n, S.LINE: before + 1 + block.line_numbers,
            S.RANK: np.full(n, chunk.rank, dtype=np.int64),
            S.OFFSET: chunk.start + block.starts, S.NBYTES: block.ends - block.starts,
            S.LINE_CHECK: checks, S.ITEM: np.zeros(n, dtype=np.int64)}


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


def add_record(batch: SummaryBatch, record: dict, where: tuple, result: ChunkResult,
               fmt: str, context: FileContext) -> None:
    """Every sample of one stored record into the batch (`where`: summary.where_of's, for
    its first sample); unusable ones become problems."""
    line = where[1]
    kept = False
    for item, sample in enumerate(samples_of(record, fmt, context)):
        if isinstance(sample, BadLine):
            result.problems.append((line, str(sample), True))
            continue
        kept = True
        batch.add(sample, (*where[:-1], item) if item else where, result.problems)
    repaired = problems_of(record)
    if kept and repaired:  # what parsing repaired (a lone surrogate, say): a kept line's
        batch.after(lambda: result.problems.extend((line, why, False) for why in repaired))


_loads = orjson.loads


def _add(batch: SummaryBatch, raw: memoryview, record: object, where: tuple,
         result: ChunkResult, fmt: str, context: FileContext) -> None:
    """A line that is not a plain sample of the board's format: a record orjson could not
    read (a BOM, NaN literals, a lone surrogate: parse_object repairs or names it), one that
    is not an object, or one of another trainer's format."""
    if record.__class__ is not dict:
        try:
            record = parse_object(bytes(raw))
        except BadLine as err:
            result.problems.append((where[1], str(err), True))
            return
    add_record(batch, record, where, result, fmt, context)
