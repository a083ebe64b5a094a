"""The index build's per-sample loops, in C when kernel.c is built (scripts/build_kernel.py),
else None and the caller's Python path runs.

Each function gives the same numbers as the Python it stands in for, or None where a value
is not of the plain kinds the C knows; the caller then runs its Python path for the batch.
So with or without the build, a dump indexes to the same summary
(tests/loaders/test_index_kernel.py); only the time differs (docs/benchmarks.md).
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

_SOURCE = Path(__file__).with_name("kernel.c")


def _load() -> tuple[object | None, str]:
    """(the built module, "") when it was built from kernel.c as it is now; else (None, why)."""
    try:
        from loaders.index import _kernel  # type: ignore[attr-defined]
    except ImportError:
        return None, "not built (scripts/build_kernel.py): the Python path runs"
    want = hashlib.sha256(_SOURCE.read_bytes()).hexdigest()[:16]
    if want != _kernel.SOURCE:
        return None, "built from another kernel.c (scripts/build_kernel.py): the Python path runs"
    return _kernel, ""


_C, MISSING = _load()  # MISSING: why the C path is not used ("" when it is)


def flat_heads(parts: list, lengths: list[int]) -> np.ndarray | None:
    """Each list's first lengths[i] numbers end to end as float64 (None -> NaN), as
    np.fromiter reads them; None when a part is not a list of plain numbers."""
    if _C is None:
        return None
    out = _C.flat_heads(parts, lengths)
    return None if out is None else np.frombuffer(out, dtype=np.float64)


def numbers(values: list) -> np.ndarray | None:
    """float64 of a list of float, int, bool and None (None -> NaN), as np.array reads it;
    None when an item is of another type or an int is past a double's range."""
    if _C is None:
        return None
    out = _C.numbers(values)
    return None if out is None else np.frombuffer(out, dtype=np.float64).copy()


def whole_numbers(values: list) -> np.ndarray:
    """np.array(values, int64), in one C pass when every item is an int within int64 (a
    batch's steps); numpy's own reading (and its errors) else."""
    out = _C.whole_numbers(values) if _C is not None and values.__class__ is list else None
    if out is None:
        return np.array(values, dtype=np.int64)
    return np.frombuffer(out, dtype=np.int64).copy()


def head_sums(parts: list, lengths: list[int]) -> np.ndarray | None:
    """sum(part[:n], 0.0) of each list (NaN where it is no list or n is 0); None when a
    value is not a float or a machine-size int (Python's sum is the rule then)."""
    if _C is None:
        return None
    out = _C.head_sums(parts, lengths)
    return None if out is None else np.frombuffer(out, dtype=np.float64).copy()


def repetitions(texts: list[str], tail: int, min_words: int, min_chars: int
                ) -> np.ndarray | None:
    """repetition.repetitions' scores; None when a text is not a str."""
    if _C is None:
        return None
    out = _C.repetitions(texts, tail, min_words, min_chars)
    return None if out is None else np.frombuffer(out, dtype=np.float64).copy()


def previews(texts: list[str], cut: int, tail: bool) -> tuple[np.ndarray, list[str]] | None:
    """(each text's length, its preview: itself up to `cut` characters, else its first cut,
    or with `tail` "…" and its last cut - 1); None without the build or when one is no str."""
    if _C is None:
        return None
    out = _C.previews(texts, cut, tail)
    return None if out is None else (np.frombuffer(out[0], dtype=np.int64), out[1])


def utf8(values: list) -> tuple[bytes, bytes, bytes | None] | None:
    """A list of str or None as an Arrow string array's buffers: int32 offsets, the UTF-8
    data, and a validity bitmap (None when no item is None); None without the build, when
    no item is a str, or when an item is another type or a str has no UTF-8."""
    return None if _C is None else _C.utf8(values)


def kl_sums(r: np.ndarray, expm1_neg: np.ndarray, expm1_pos: np.ndarray,
            lengths: np.ndarray) -> np.ndarray | None:
    """kl.segment_sums' four estimator sums (rows k1, k2, k3, k3_reverse) of segments of
    lengths[i] > 0 finite log-ratios, numpy's expm1(-r) and expm1(r) given; None without
    the build."""
    out = None if _C is None else _C.kl_sums(r, expm1_neg, expm1_pos,
                                             np.ascontiguousarray(lengths, np.int64))
    return None if out is None else np.frombuffer(out, np.float64).reshape(4, -1)


def signatures(texts: list[str], window: int, bands: int, rows: int) -> np.ndarray | None:
    """Each text's LSH bands, uint32 end to end (loaders.index.signatures); None without
    the build or when one is no str."""
    if _C is None:
        return None
    out = _C.signatures(texts, window, bands, rows)
    return None if out is None else np.frombuffer(out, dtype=np.uint32)


def token_bins(values: np.ndarray, lengths: np.ndarray, groups: np.ndarray,
               shape: tuple[int, int], rel_bins: int, abs_tokens: int
               ) -> tuple[np.ndarray, np.ndarray] | None:
    """token_bins._binned_by_token's (counts, sums), shape (groups x width), in one pass;
    None without the build."""
    if _C is None:
        return None
    counts, sums = _C.token_bins(
        np.ascontiguousarray(values, np.float64), np.ascontiguousarray(lengths, np.int64),
        np.ascontiguousarray(groups, np.int64), shape[1], shape[0], rel_bins, abs_tokens)
    return (np.frombuffer(counts, np.float64).reshape(shape),
            np.frombuffer(sums, np.float64).reshape(shape))


def all_strings(values: list) -> bool:
    """Every item of the list a str (exactly); in one C pass when built."""
    if _C is not None and values.__class__ is list:
        return _C.all_strings(values)
    return all(v.__class__ is str for v in values)


def top_tokens(values: np.ndarray, lows: np.ndarray, highs: np.ndarray, ks: np.ndarray
               ) -> np.ndarray | None:
    """hot_tokens._top_tokens' offsets: each run's ks[r] largest finite values above 0,
    largest first (a tie in offset order), in one pass; None without the build."""
    if _C is None:
        return None
    out = _C.top_tokens(np.ascontiguousarray(values, np.float64),
                        *(np.ascontiguousarray(a, np.int64) for a in (lows, highs, ks)))
    return np.frombuffer(out, np.int64)


def text_ids(texts: list, prefix: str, odd: Callable[[str], int], edges: tuple[str, str] = ("", "")
             ) -> np.ndarray | None:
    """text.text_id(prefix + text) of each text, odd(text) for one whose first char is in
    edges[0] or whose last is in edges[1] or either is whitespace (or that UTF-8 cannot hold):
    in one C pass, a text equal to the one before it hashed once; None without the build
    or when one is no str."""
    if _C is None or texts.__class__ is not list:
        return None
    out = _C.text_ids(texts, prefix.encode(), odd, *edges)
    return None if out is None else np.frombuffer(out, dtype=np.int64)


def codes(values: list) -> tuple[np.ndarray, list[str]] | bool | None:
    """(each value's code into the texts, -1 for None; the texts in first-seen order), or
    False when the distinct values (None too) are more than half the values; None without
    the build or when a value is neither str nor None (chunk.coded's Python path)."""
    if _C is None or values.__class__ is not list:
        return None
    out = _C.codes(values)
    return out if out is None or out is False else (np.frombuffer(out[0], np.int32), out[1])


def gather(chunks: list[np.ndarray], sources: np.ndarray, lengths: np.ndarray,
           out: memoryview) -> bool:
    """Fill `out` (a writable buffer) with runs of rows, in order: lengths[r] rows from the
    row sources[r] of the chunks (1-D arrays of one dtype) laid end to end; False without
    the build."""
    if _C is None:
        return False
    starts = np.zeros(len(chunks) + 1, np.int64)
    np.cumsum([len(chunk) for chunk in chunks], out=starts[1:])
    _C.gather(tuple(chunks), starts, sources.astype(np.int64), lengths.astype(np.int64), out,
              chunks[0].itemsize if chunks else 1)
    return True


def gather_text(chunks: list[tuple[np.ndarray, object]], sources: np.ndarray,
                lengths: np.ndarray, *outs: memoryview) -> tuple[bytes, bytes] | bool | None:
    """gather for a text or binary column without nulls, each chunk its n + 1 int32
    offsets (from its first row's) and its data: the sorted column's offsets and data, or
    None without the build or past 2 GB of data (a take then).  Given `outs` (writable
    offsets and data of just the sizes needed), they are filled, and the answer is True."""
    if _C is None:
        return None
    starts = np.zeros(len(chunks) + 1, np.int64)
    np.cumsum([len(offsets) - 1 for offsets, _ in chunks], out=starts[1:])
    return _C.gather_text(tuple(chunks), starts, sources.astype(np.int64),
                          lengths.astype(np.int64), *outs)


def decode_text(codes: np.ndarray, offsets: np.ndarray, data: object, wide: bool = False
                ) -> tuple[bytes, bytes] | None:
    """A coded text column without nulls (int32 codes) as its texts' offsets (int64 ones
    when `wide`) and data, the dictionary's n + 1 int32 offsets and data given; None without
    the build, for a code out of the dictionary or past 2 GB of text with 32-bit offsets."""
    if _C is None:
        return None
    return _C.decode_text(np.ascontiguousarray(codes, np.int32), offsets, data, wide)


def column(objs: list[dict], key: str) -> list:
    """[o.get(key) for o in objs], in one C pass when built."""
    if _C is not None:
        out = _C.column(objs, key)
        if out is not None:
            return out
    return [o.get(key) for o in objs]


def list_lengths(values: list) -> np.ndarray | None:
    """Each value's length when it is a list, -1 when it is a scalar, text, dict or None;
    None when one is something else (an array: the caller measures it)."""
    if _C is None:
        return None
    out = _C.list_lengths(values)
    return None if out is None else np.frombuffer(out, dtype=np.int64)


def take(objs: list[dict], keys: tuple[str, ...]) -> list[list] | None:
    """[column(objs, key) for key in keys] in one C pass over the samples (each sample's dict
    read once, while it is in cache); None without the build or when one is no dict."""
    return None if _C is None else _C.take(objs, keys)


def alias(addresses: list[int], sizes: list[int]) -> int | None:
    """One new mapping of the pages of shared mappings (whole pages each), end to end: its
    address, or None without the build, off Linux, or where the system refuses."""
    if _C is None or not hasattr(_C, "alias"):
        return None
    return _C.alias(np.array(addresses, np.int64), np.array(sizes, np.int64))


def unmap(address: int, size: int) -> None:
    """End a mapping alias made."""
    _C.unmap(address, size)
