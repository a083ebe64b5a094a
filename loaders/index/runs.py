"""A sort of parts each already in order, as runs of consecutive rows: each column copied a
run at a time out of its chunks, in C (kernel.gather, gather_text, decode_text), where an
Arrow take copies a row at a time.  The long run's million rows are 8,000 runs."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from loaders.index.kernel import decode_text, gather, gather_text

Runs = tuple[np.ndarray, np.ndarray]  # (first row, rows) of each run of the order
MIN_RUN = 8  # rows a run on average, at least, for the runs' copies to beat a take


def runs_of(order: pa.Array) -> Runs | None:
    """The sort's order as runs of consecutive rows, or None when they are short (a take
    then)."""
    rows = order.to_numpy()
    starts = np.flatnonzero(np.diff(rows) != 1) + 1
    if len(starts) + 1 > len(rows) // MIN_RUN:
        return None
    starts = np.concatenate([[0], starts])
    return rows[starts].astype(np.int64), np.diff(np.append(starts, len(rows)))


def sort_order(keys: list[pa.ChunkedArray]) -> pa.Array:
    """The stable ascending order of rows by these keys (no nulls), as pyarrow's sort_indices
    gives it.  Whole-number keys whose spans fit 63 bits together are packed into one int64
    a row first, and numpy's stable sort (timsort) merges the parts' runs: the long run's
    order 50-80 -> 18-25 ms.  Each part's keys are packed where they lie (_packed): copied
    out of 104 chunks first, they cost 50-150 ms of fresh pages on a loaded machine."""
    if keys and all(pa.types.is_integer(key.type) for key in keys):
        ranges = [pc.min_max(key) for key in keys]
        lows = [_int(bounds["min"]) for bounds in ranges]
        highs = [_int(bounds["max"]) for bounds in ranges]
        bits = [(high - low).bit_length() for low, high in zip(lows, highs)]
        if sum(bits) <= 63 and max(highs, default=0) < 1 << 63:  # a uint64 past int64: Arrow
            return pa.array(np.argsort(_packed(keys, lows, bits), kind="stable"))
    table = pa.table({str(at): key for at, key in enumerate(keys)})
    return pc.sort_indices(table, sort_keys=[(name, "ascending") for name in table.column_names])


def _int(bound: pa.Scalar) -> int:
    return 0 if bound.as_py() is None else int(bound.as_py())  # an empty key's: no rows


def _packed(keys: list[pa.ChunkedArray], lows: list[int], bits: list[int]) -> np.ndarray:
    """Each row's keys, less their lows, side by side in one int64 (the first key highest),
    a chunk at a time where every key has the same chunks (a concatenation's), so its
    temporaries stay in cache; the keys joined first otherwise."""
    layouts = {tuple(len(chunk) for chunk in key.chunks) for key in keys}
    if len(layouts) != 1:
        keys = [pa.chunked_array([key.combine_chunks()]) for key in keys]
    packed = np.zeros(len(keys[0]), dtype=np.int64)
    at = 0
    for pieces in zip(*(key.chunks for key in keys)):
        out = packed[at:at + len(pieces[0])]
        at += len(out)
        for piece, low, width in zip(pieces, lows, bits):
            out <<= width
            out |= piece.to_numpy().astype(np.int64, copy=False) - low
    return packed


def gathered(column: pa.ChunkedArray, runs: Runs, kind: pa.DataType | None = None
             ) -> pa.Array | None:
    """The column sorted by its runs, as `kind` (its own type by default; text, for a coded
    text column to decode): numbers, text or binary without nulls, and coded text without
    nulls, kept coded or made text; None for any other column, or without the build (a
    take then)."""
    own = column.type
    kind = own if kind is None else kind
    if column.null_count:
        return None
    if pa.types.is_dictionary(own) and (_is_any_string(kind) or kind == own):
        return _decoded(column, runs, decode=kind != own, wide=pa.types.is_large_string(kind))
    if kind != own:
        return None
    if pa.types.is_string(own) or pa.types.is_binary(own):
        return _gathered_text(column, runs)
    if not (pa.types.is_integer(own) or pa.types.is_floating(own)):
        return None
    return _gathered_numbers([chunk.to_numpy(zero_copy_only=True) for chunk in column.chunks],
                             runs, own)


def _gathered_numbers(chunks: list[np.ndarray], runs: Runs, kind: pa.DataType
                      ) -> pa.Array | None:
    """One copy, where a join then a take made two (the join's fresh pages cost as much as
    the copies)."""
    out = pa.allocate_buffer(int(runs[1].sum()) * kind.bit_width // 8)
    if not gather(chunks, *runs, memoryview(out)):
        return None
    return pa.Array.from_buffers(kind, len(out) * 8 // kind.bit_width, [None, out])


def _gathered_text(column: pa.ChunkedArray, runs: Runs) -> pa.Array | None:
    """A run's bytes are one copy and its offsets a shift."""
    got = gather_text([_text_buffers(chunk) for chunk in column.chunks], *runs)
    return None if got is None else _text(column.type, *got)


def _is_any_string(kind: pa.DataType) -> bool:
    """UTF-8 text of 32- or 64-bit offsets (slabs.is_text is another test: 32-bit text or
    binary, what a slab holds)."""
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _decoded(column: pa.ChunkedArray, runs: Runs, decode: bool, wide: bool = False
             ) -> pa.Array | None:
    """A coded text column whose chunks share one dictionary (unify_dictionaries'): its
    codes gathered, then kept with that dictionary, or with `decode` each code's text
    copied (kernel.decode_text; `wide`: as large_string)."""
    if not column.num_chunks:
        return None
    texts = column.chunk(0).dictionary
    if not (pa.types.is_string(texts.type) and pa.types.is_int32(column.type.index_type)
            and all(chunk.dictionary.equals(texts) for chunk in column.chunks[1:])):
        return None
    if decode and len(texts) == 1:  # one text in every row (a reason no line gave)
        return _repeated(texts[0].as_py().encode(), int(runs[1].sum()), wide)
    codes = _gathered_numbers([chunk.indices.to_numpy(zero_copy_only=True)
                               for chunk in column.chunks], runs, pa.int32())
    if codes is None:
        return None
    if not decode:
        return pa.DictionaryArray.from_arrays(codes, texts, ordered=column.type.ordered)
    got = decode_text(codes.to_numpy(zero_copy_only=True), *_text_buffers(texts), wide)
    return None if got is None else _text(pa.large_string() if wide else pa.string(), *got)


def decoded_text(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A coded text column as large_string: in C where it has one chunk, no null and int32
    codes of text (0.09 s for the long run's prompts, against Arrow's cast's 0.14)."""
    if column.num_chunks == 1 and not column.null_count:
        chunk = column.chunk(0)
        if pa.types.is_int32(chunk.type.index_type) and pa.types.is_string(
                chunk.dictionary.type):
            got = decode_text(chunk.indices.to_numpy(zero_copy_only=True),
                              *_text_buffers(chunk.dictionary), True)
            if got is not None:
                return pa.chunked_array([_text(pa.large_string(), *got)])
    kind = column.type.value_type
    return column.cast(pa.large_string() if pa.types.is_string(kind) else kind)


def _repeated(value: bytes, rows: int, wide: bool = False) -> pa.Array | None:
    """`value` in each of `rows` rows as text (`wide`: large_string), laid out at once: an
    empty one's offsets are zeros no page of which is touched (the long run's empty finish
    reasons, 10 ms a column decoded a row at a time); None past 2 GB."""
    if rows * len(value) >= 1 << 31:
        return None
    width = np.int64 if wide else np.int32
    offsets = np.zeros(rows + 1, width) if not value else (
        np.arange(rows + 1, dtype=width) * width(len(value)))
    return pa.Array.from_buffers(pa.large_string() if wide else pa.string(), rows,
                                 [None, pa.py_buffer(offsets), pa.py_buffer(value * rows)])


def _text(kind: pa.DataType, offsets: bytes, data: bytes) -> pa.Array:
    width = 8 if pa.types.is_large_string(kind) else 4
    return pa.Array.from_buffers(kind, len(offsets) // width - 1,
                                 [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _text_buffers(chunk: pa.Array) -> tuple[np.ndarray, pa.Buffer | bytes]:
    """A text chunk's n + 1 offsets from its first row's (a slice's too), and its data."""
    if not len(chunk):
        return np.zeros(1, np.int32), b""
    _, offsets, data = chunk.buffers()
    at = np.frombuffer(offsets, np.int32)[chunk.offset:chunk.offset + len(chunk) + 1]
    return at, b"" if data is None else data
