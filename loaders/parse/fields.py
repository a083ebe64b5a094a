"""Single fields of a record that need a strict reading."""
from __future__ import annotations

import math

import numpy as np

from loaders.parse.arrays import BadField, float_array

_TRUE = frozenset({"true", "1"})
_FALSE = frozenset({"false", "0"})


def flag(value: object) -> bool:
    """A yes/no field: true/false, 1/0 and the strings "true"/"false"/"1"/"0" (any case);
    missing is False.  Anything else raises BadField: bool("false") is True, so guessing
    would put samples on the wrong side."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
    raise BadField(f"expected true or false, got {str(value)[:40]!r}")


def scalar(value: object) -> float:
    """A reward-like scalar as float; missing is NaN.  Raises BadField."""
    if value is None:
        return math.nan
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:
            raise BadField(f"number out of range: {str(value)[:20]}…") from None
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise BadField(f"expected a number, got {str(value)[:40]!r}")


def finite_sum(values: list | np.ndarray, n: int) -> tuple[float, int]:
    """(sum over finite values, count of non-finite values) of the first n items."""
    if isinstance(values, np.ndarray):  # a Parquet dump's column: no Python loop
        arr = float_array(values[:n])
        finite = np.isfinite(arr)
        return float(arr[finite].sum()), int(n - finite.sum())
    if not isinstance(values, list):
        raise BadField(f"expected a list of numbers, got {type(values).__name__}")
    part = values if len(values) == n else values[:n]
    try:
        total = sum(part, 0.0)
        if math.isfinite(total):
            return total, 0
    except (TypeError, OverflowError):
        pass
    arr = float_array(part)
    finite = np.isfinite(arr)
    return float(arr[finite].sum()), int(n - finite.sum())
