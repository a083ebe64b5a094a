"""A run of a dump's plain lines read straight into columns (lines.c), when it is built.

A plain line is one of the board's own format whose values are scalars, the per-token
number lists (schema.FLOAT_ARRAY_KEYS) or the token list: most lines of a native dump.  The
summary reads such a run (a Block) through BlockFields, the same columns a batch of parsed
dicts gives through Fields, with the number lists laid end to end: no dict, no float
object a token.  Any other line is read by orjson as before, so a dump indexes to the same
summary with or without the build (tests/loaders/test_index_lines.py).
"""
from __future__ import annotations

import hashlib
import os
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson

from loaders import schema as S

_SOURCE = Path(__file__).with_name("lines.c")
NUMBER_KEYS = S.FLOAT_ARRAY_KEYS
STRING_KEYS = (S.RESPONSE_TOKENS,)
# keys a Block never summarizes itself: such a run is read as dicts (the per-sample rules)
AS_DICTS = frozenset(S.CONVERSATION_KEYS)


class _Missing:
    """A key a line does not have (None is a value: a null)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


def powers_of_five() -> bytes:
    """5^q for q in [-342, 308] as lines.c's float parser wants them: the high 128 bits of
    each, as (hi, lo) little-endian uint64s; a negative power's reciprocal rounded up, then
    cut to 128 bits (as fast_float's table_generation.py makes its table)."""
    out = []
    for q in range(-342, 0):
        power5 = 5 ** -q
        z = power5.bit_length()  # the least z with 2^z >= 5^-q (5^-q is no power of two)
        c = 2 ** ((z + 127) if q >= -27 else (2 * z + 128)) // power5 + 1
        while c >= 1 << 128:
            c //= 2
        out.append(c)
    for q in range(309):
        power5 = 5 ** q
        while power5 < 1 << 127:
            power5 *= 2
        while power5 >= 1 << 128:
            power5 //= 2
        out.append(power5)
    return b"".join(struct.pack("<QQ", c >> 64, c & (2**64 - 1)) for c in out)


def _load() -> object | None:
    try:
        from loaders.index import _lines  # type: ignore[attr-defined]
    except ImportError:
        return None
    want = hashlib.sha256(_SOURCE.read_bytes()).hexdigest()[:16]
    if want != _lines.SOURCE:
        return None
    _lines.set_powers(powers_of_five())
    _hand_hasher(_lines)
    return _lines


def _hand_hasher(module: object) -> None:
    """Give the C scan the xxhash package's own XXH3-64 (its library exports it), so a
    block's line checks are made as its lines are read: the same hash record.line_check
    makes, proven on a probe first; without it the checks are made per line in Python."""
    import ctypes

    import xxhash

    probe = rb'{"step": 1, "probe": "\u00e9"}' * 7
    try:
        from xxhash import _xxhash  # the package's compiled part: its layout may change

        address = ctypes.cast(ctypes.CDLL(_xxhash.__file__).XXH3_64bits, ctypes.c_void_p).value
    except (ImportError, OSError, AttributeError):
        return
    if address and module.set_hasher(address, probe) != xxhash.xxh3_64_intdigest(probe):
        module.set_hasher(0, b"")


# RL_BOARD_PLAIN_LINES=0 reads every line with orjson (the A/B of benchmarks/bench_index.py)
_C = _load() if os.environ.get("RL_BOARD_PLAIN_LINES", "1") != "0" else None
# sums in order, as builtin sum adds on 3.11; 3.12's sum compensates: the lists' own path then
ORDERED_SUMS = sys.version_info < (3, 12)
NumberColumn = tuple[np.ndarray, np.ndarray]  # (values end to end, length a sample, -1: none)


class TokenSpans:
    """A token list column as lines.c leaves it: each sample's list length (-1: none) and
    its bytes in the data, every string in it checked.  A list is read (by orjson, as a
    line's other values are) only when asked for: a digest's hot tokens want a few a group,
    and a million lists of str cost more to make and let go than the rest of their lines."""

    def __init__(self, data: bytes, lengths: np.ndarray, spans: np.ndarray) -> None:
        self.data, self.lengths, self._spans = data, lengths, spans.reshape(-1, 2)

    def __len__(self) -> int:
        return len(self.lengths)

    def __getitem__(self, i: int) -> list | None:
        """Sample i's list; None where it has none."""
        if self.lengths[i] < 0:
            return None
        start, end = self._spans[i].tolist()
        return orjson.loads(self.data[start:end])

    def tokens(self, rows: np.ndarray, positions: np.ndarray) -> list[str | None]:
        """Each row's token at its position, the strings read in one C call (lines.c
        tokens_at: the strings before it skipped, not made), not their lists; None where a
        row has no list or its list no such token."""
        rows, positions = np.asarray(rows, np.int64), np.asarray(positions, np.int64)
        spans = self._spans[rows]
        inside = (positions >= 0) & (positions < self.lengths[rows])
        found = _C.tokens_at(self.data, spans[:, 0].tobytes(), spans[:, 1].tobytes(),
                             np.where(inside, positions, -1).tobytes())
        return [None if not ok else self[row][pos] if got is None else got
                for got, ok, row, pos in zip(found, inside.tolist(), rows.tolist(),
                                             positions.tolist())]

    def lists(self, missing: object) -> list:
        """Every sample's list, `missing` where it has none."""
        return [missing if value is None else value for value in map(self.__getitem__,
                                                                     range(len(self)))]


@dataclass
class Block:
    end: int  # where the next line starts
    lines: int  # lines read, blank ones too
    starts: np.ndarray  # each sample's line, as a span of the data
    ends: np.ndarray
    line_numbers: np.ndarray  # its line among those read, from 0
    columns: dict[str, list | NumberColumn | TokenSpans]
    checks: np.ndarray | None = None  # each line's record.line_check, when the C scan made it
    gaps: set[str] | None = None  # the keys some sample lacks (None: not known)

    def __len__(self) -> int:
        return len(self.starts)


def available() -> bool:
    return _C is not None


def read_block(data: bytes, pos: int, max_samples: int, max_bytes: int) -> Block | None:
    """The plain lines from pos on, up to max_samples samples or about max_bytes; None when
    the line at pos is not plain (or there is no build)."""
    if _C is None:
        return None
    found = _C.scan(data, pos, max_samples, max_bytes, MISSING, NUMBER_KEYS, STRING_KEYS)
    if found is None:
        return None
    end, lines, starts, ends, numbers, columns, checks, gaps = found
    for key, value in columns.items():
        if isinstance(value, tuple) and len(value) == 3:  # a token list column
            columns[key] = TokenSpans(data, np.frombuffer(value[0], np.int64),
                                      np.frombuffer(value[1], np.int64))
        elif isinstance(value, tuple):
            columns[key] = (np.frombuffer(value[0], np.float64),
                            np.frombuffer(value[1], np.int64))
    return Block(end, lines, np.frombuffer(starts, np.int64), np.frombuffer(ends, np.int64),
                 np.frombuffer(numbers, np.int64), columns,
                 None if checks is None else np.frombuffer(checks, np.int64), gaps)


def flat_sums(values: np.ndarray, sizes: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each sample's first lengths[i] numbers summed in order from 0.0 (NaN with no list or
    n 0), as builtin sum adds them on 3.11 (lines.c)."""
    return np.frombuffer(_C.flat_sums(values, sizes, lengths.astype(np.int64)),
                         np.float64).copy()
