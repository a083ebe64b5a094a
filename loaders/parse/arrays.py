"""Per-token lists -> float arrays, and the one rule that aligns them.

Alignment rule: every per-token list of a sample (response_tokens, logprobs, ref_logprobs,
values, token_rewards) is aligned at the first token and cut to the shortest of them.
Padding and clipped responses only ever add or drop tokens at the end, so the tokens that
remain keep their own logprob.  A sample where the lengths differ is flagged length_mismatch.
"""
from __future__ import annotations

import struct
from numbers import Real

import numpy as np

from loaders import schema as S

ALIGNED_KEYS = (S.RESPONSE_TOKENS,) + S.FLOAT_ARRAY_KEYS


class BadField(ValueError):
    """A field whose value cannot be used; the sample is kept without it."""


def pack_floats(values: list | np.ndarray, n: int) -> bytes:
    """The first n values as native doubles; None becomes NaN.  Raises BadField."""
    if isinstance(values, np.ndarray):  # a column of a Parquet dump, already numbers
        return float_array(values[:n]).tobytes()
    if not isinstance(values, list):
        raise BadField(f"expected a list of numbers, got {type(values).__name__}")
    part = values if len(values) == n else values[:n]
    try:
        return struct.pack(f"{n}d", *part)
    except (struct.error, TypeError, OverflowError):
        return float_array(part).tobytes()


def float_array(values: object) -> np.ndarray:
    """A list of numbers (None -> NaN) as float64; anything else raises BadField."""
    if isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind in "iuf":
        return values.astype(np.float64, copy=False)
    if not isinstance(values, list):
        raise BadField(f"expected a list of numbers, got {type(values).__name__}")
    try:
        arr = np.array(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise BadField("expected a list of numbers") from None
    if arr.ndim != 1:
        raise BadField("expected a flat list of numbers")
    return arr


def is_number_list(value: object) -> bool:
    """True for a non-empty list whose first non-null item is a number (not a bool)."""
    if isinstance(value, np.ndarray):
        return value.ndim == 1 and value.size > 0 and value.dtype.kind in "iuf"
    if not isinstance(value, list) or not value:
        return False
    first = next((v for v in value if v is not None), None)
    return isinstance(first, Real) and not isinstance(first, bool)


def aligned_length(obj: dict) -> tuple[int, bool]:
    """(length after alignment, whether the per-token lists disagreed in length)."""
    lengths = [len(v) for k in ALIGNED_KEYS if isinstance(v := obj.get(k), (list, np.ndarray))]
    if not lengths:
        return 0, False
    return min(lengths), min(lengths) != max(lengths)
