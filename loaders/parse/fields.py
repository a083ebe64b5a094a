"""Single fields of a record that need a strict reading."""
from __future__ import annotations

from loaders.parse.arrays import BadField

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
