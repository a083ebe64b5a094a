"""A Parquet dump's summary, made by the writer and stored in the file's footer.

The writer (loaders/writer/parquet.py) holds a file's rows as an Arrow table before it
writes them; when the board is importable it runs the index's own summary over that table,
exactly as scan_board would over the rows read back (the same records, row checks and
SummaryBatch: footer_summary.summary_blob), and stores the columns in the footer's key-value
metadata as one Arrow IPC stream, LZ4-packed with its size and hash.  A cold index of such a file
then reads its footer and no row: no token array is decoded, no JSON parsed.

A summary is stored only when it is the whole truth of its rows: every row one sample, no
problem reported, no extra column capped.  It is used only when the board that reads it
would have made the same (summary_facts: the index version, the token digest's, the
columns, and what the file's path says: rank, step, split), else the rows are summarized
as if none were stored.  The stream is unpacked only to a size within the budgets
(limits.MAX_SUMMARY_BYTES), holds plain buffers only (a compressed buffer declares the size
Arrow allocates for it: refused unread) and is validated in full.
RL_BOARD_STORED_SUMMARY=0 ignores it (the A/B of tests/loaders/test_stored_summary.py).
"""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass

import numpy as np
import orjson
import pyarrow as pa
from xxhash import xxh3_64_intdigest

from loaders import limits
from loaders import schema as S
from loaders.formats.context import context_of
from loaders.index.arrow_part import concatenated
from loaders.index.chunk import Chunk
from loaders.index.token_digest import VERSION as DIGEST_VERSION

KEY = b"rl_logging_board.summary"  # the footer's key-value metadata entry
FACTS = b"facts"  # the stream's schema metadata: summary_facts() of its writer
LOCATED = (S.FILE, S.LINE, S.RANK, S.OFFSET)  # where the reader found the rows: set there


def summary_facts(rel: str, rank: int) -> dict:
    """What a stored summary's numbers depend on besides the rows."""
    context = context_of(rel, rank)
    return {"index": S.SUMMARY_VERSION, "digest": DIGEST_VERSION, "rank": rank,
            "step": context.step, "validation": context.validation,
            "columns": sorted(S.SUMMARY_DTYPES)}


@dataclass(frozen=True)
class StoredRows:
    """A chunk's rows of a stored summary: its columns but where the reader found them."""
    table: pa.Table
    chunk: Chunk
    first: int  # the chunk's first row in the file


def holds_summary(footer: dict[bytes, bytes] | None) -> bool:
    """Whether a footer holds a summary this board would try (RL_BOARD_STORED_SUMMARY=0:
    none does)."""
    return KEY in (footer or {}) and os.environ.get("RL_BOARD_STORED_SUMMARY", "1") != "0"


def stored_rows(footer: dict[bytes, bytes] | None, rows: int, chunk: Chunk, first: int,
                count: int) -> StoredRows | None:
    """The summary rows [first, first + count) of a file of `rows` rows; None when the
    footer holds none this board may use."""
    if not holds_summary(footer):
        return None
    packed = footer[KEY]
    try:
        blob = unpacked(packed)
        if blob is None or _compressed(blob):
            return None
        table = pa.ipc.open_stream(blob).read_all()
        table.validate(full=True)
        facts = orjson.loads((table.schema.metadata or {}).get(FACTS, b"null"))
    except (pa.ArrowException, OSError, orjson.JSONDecodeError, ValueError, struct.error,
            IndexError):
        return None
    if facts != summary_facts(chunk.rel, chunk.rank) or table.num_rows != rows or not (
            as_made(table.schema)):
        return None
    return StoredRows(table.slice(first, count).replace_schema_metadata(None), chunk, first)


# what the row path makes of each column (parts.table_of, the texts cast to plain strings);
# a column of nothing but nulls is null
_TYPES = {"int64": pa.types.is_int64, "int32": pa.types.is_int64, "bool": pa.types.is_boolean,
          "float64": pa.types.is_float64, "string": pa.types.is_string,
          "category": pa.types.is_string, "object": pa.types.is_binary}
_EXTRA_TYPES = (pa.types.is_int64, pa.types.is_float64, pa.types.is_boolean,
                pa.types.is_string)
_MADE_LATER = (S.TRUNCATED, S.TRUNCATION_INFERRED, S.NONFINITE)  # by table.combine


def as_made(schema: pa.Schema) -> bool:
    """Whether a stored summary's columns are the ones the row path makes, of its types:
    every summary column (but where the reader found the rows, and what the run adds),
    each name once, extras of plain numbers or texts.  No dictionary, view, nested or
    other type: nothing a hostile stream could make expand once read.  A run's files share
    one schema: the last one found so is compared whole (Arrow's equals, metadata aside),
    not checked field by field again."""
    if _ACCEPTED and schema.equals(_ACCEPTED[0]):
        return True
    if not _as_made(schema):
        return False
    _ACCEPTED[:] = [schema.remove_metadata()]
    return True


_ACCEPTED: list[pa.Schema] = []  # the last schema as_made accepted (one a worker)


def _as_made(schema: pa.Schema) -> bool:
    names = schema.names
    wanted = set(S.SUMMARY_DTYPES).difference(LOCATED, _MADE_LATER)
    if len(set(names)) != len(names) or set(LOCATED) & set(names) or not wanted <= set(names):
        return False
    for field in schema:
        dtype = S.SUMMARY_DTYPES.get(field.name)
        tests = (_TYPES[dtype],) if dtype in _TYPES else _EXTRA_TYPES
        if not (pa.types.is_null(field.type) or any(test(field.type) for test in tests)):
            return False
    return True


def packed(stream: bytes) -> bytes:
    """An IPC stream as the footer holds it: its size and its XXH3 (8 bytes each), then its
    LZ4 block."""
    return _HEAD.pack(len(stream), xxh3_64_intdigest(stream)) + _LZ4.compress(
        stream, asbytes=True)


def unpacked(blob: bytes) -> bytes | None:
    """The stream packed() made; None when the size it claims is past the budgets, or what
    unpacks is not the stream it was (LZ4 fills any size it is given; raises what Arrow
    raises on a block that is no LZ4)."""
    if len(blob) < _HEAD.size:
        return None
    size, check = _HEAD.unpack_from(blob)
    if size > min(limits.MAX_SUMMARY_BYTES, limits.MAX_SUMMARY_RATIO * len(blob)):
        return None
    stream = _LZ4.decompress(blob[_HEAD.size:], decompressed_size=size, asbytes=True)
    return stream if xxh3_64_intdigest(stream) == check else None


_HEAD = struct.Struct("<QQ")
_LZ4 = pa.Codec("lz4_raw")  # 3-4x smaller; unpacks in 7 us where zstd takes 30


def located(parts: list[StoredRows]) -> pa.Table:
    """Stored rows, one after the other, with where they are first, in a batch's column
    order: the file, the line (from 1 in each chunk), the rank, the offset (the row index
    in the file).  Made for every part at once: a few arrays, not a few a file."""
    table = concatenated([part.table for part in parts])
    sizes = np.array([part.table.num_rows for part in parts], dtype=np.int64)
    starts = np.repeat(np.cumsum(sizes) - sizes, sizes)
    lines = np.arange(int(sizes.sum()), dtype=np.int64) - starts + 1
    rels = list(dict.fromkeys(part.chunk.rel for part in parts))
    codes = np.repeat(np.array([rels.index(p.chunk.rel) for p in parts], np.int32), sizes)
    columns = (
        pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(rels, pa.string())),
        pa.array(lines),
        pa.array(np.repeat(np.array([p.chunk.rank for p in parts], np.int64), sizes)),
        pa.array(lines - 1 + np.repeat(np.array([p.first for p in parts], np.int64), sizes)))
    for at, (name, column) in enumerate(zip(LOCATED, columns)):  # a column a call: cheaper
        table = table.add_column(at, name, column)  # than a table of every column anew
    return table


def _compressed(blob: bytes) -> bool:
    """Whether a record or dictionary batch of the stream says its buffers are compressed:
    such a buffer declares the size it decompresses to, and Arrow would allocate it (a bomb).
    Read from each message's flatbuffer (Message.fbs): its header's `compression` field."""
    reader = pa.ipc.MessageReader.open_stream(blob)
    while (message := _next(reader)) is not None:
        if message.type not in ("dictionary", "record batch"):
            continue
        meta = message.metadata.to_pybytes()
        head = _ref(meta, _present(meta, _ref(meta, 0), 2))  # Message.header
        if message.type == "dictionary":  # DictionaryBatch.data: its record batch
            head = _ref(meta, _present(meta, head, 1))
        if _field(meta, head, 3) is not None:  # RecordBatch.compression
            return True
    return False


def _next(reader: pa.ipc.MessageReader) -> pa.ipc.Message | None:
    try:
        return reader.read_next_message()
    except StopIteration:
        return None


def _present(buf: bytes, table: int, i: int) -> int:
    at = _field(buf, table, i)
    if at is None:
        raise struct.error(f"no field {i}")  # a batch with no header: refused
    return at


def _field(buf: bytes, table: int, i: int) -> int | None:
    """Where field i of the flatbuffer table at `table` is; None when it is absent."""
    vtable = table - _read(buf, _I32, table)
    if 4 + 2 * i + 2 > _read(buf, _U16, vtable):
        return None
    offset = _read(buf, _U16, vtable + 4 + 2 * i)
    return table + offset if offset else None


def _ref(buf: bytes, at: int) -> int:
    """The table an offset field at `at` points to."""
    return at + _read(buf, _U32, at)


_I32, _U16, _U32 = struct.Struct("<i"), struct.Struct("<H"), struct.Struct("<I")


def _read(buf: bytes, kind: struct.Struct, at: int) -> int:
    """A number at `at`; struct.error (the blob is refused) outside the buffer, where
    unpack_from would count a negative place from the end."""
    if not 0 <= at <= len(buf) - kind.size:
        raise struct.error(f"offset {at} outside the message")
    return kind.unpack_from(buf, at)[0]
