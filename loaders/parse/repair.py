"""Values only the JSON fallback parser makes, which nothing downstream can store or show.

orjson rejects a lone surrogate escape ("\\ud800") and numbers past a double, so such lines
go to Python's json, which returns the surrogate as is (pyarrow, Streamlit and the index
cannot encode it) and refuses integers longer than sys.get_int_max_str_digits().  Both are
repaired here, field by field, and each repair becomes a problem of that line, so the rest
of the line is kept.
"""
from __future__ import annotations

import re
import sys

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
# a JSON escape that may decode to a surrogate (a false alarm only costs a walk)
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class Parsed(dict):
    """A parsed line with repaired values; `problems` says which fields, one reason each."""

    def __init__(self, obj: dict, problems: list[str]) -> None:
        super().__init__(obj)
        self.problems = problems


class LongInt(str):
    """An integer literal longer than Python reads, kept as text; found and reported by
    repair(), which turns it into a plain str."""


def long_int(digits: str) -> int | str:
    """parse_int hook for json.loads: an int, or a LongInt saying how long it was."""
    limit = sys.get_int_max_str_digits()
    count = len(digits.lstrip("-"))
    if not limit or count <= limit:
        return int(digits)
    return LongInt(f"<an integer of {count:,} digits>")


def problems_of(record: object) -> list[str]:
    """The field problems parse_object found in a record (none for most)."""
    return record.problems if isinstance(record, Parsed) else []


def encodable(text: str) -> str:
    """text with every lone surrogate replaced by U+FFFD, so it encodes as UTF-8."""
    return _SURROGATE.sub(REPLACEMENT, text)


def repair(obj: dict) -> dict:
    """obj with its strings and keys encodable and long integers as plain text; a Parsed
    naming the fields when anything was repaired.  Iterative: obj may be 1000 levels deep."""
    fields: dict[str, set[str]] = {}
    top = _repaired_dict(obj, None, fields)
    stack = [(value, key) for key, value in top.items() if isinstance(value, (dict, list))]
    while stack:
        container, field = stack.pop()
        if isinstance(container, dict):
            fixed = _repaired_dict(container, field, fields)
            container.clear()
            container.update(fixed)
            children = fixed.values()
        else:
            for index, value in enumerate(container):
                if isinstance(value, str):
                    container[index] = _repaired_str(value, field, fields)
            children = container
        stack.extend((child, field) for child in children if isinstance(child, (dict, list)))
    if not fields:
        return obj
    return Parsed(top, [f"{_shown(field)}: {'; '.join(sorted(what))}"
                        for field, what in fields.items()])


def _repaired_dict(obj: dict, field: str | None, fields: dict[str, set[str]]) -> dict:
    out: dict = {}
    for key, value in obj.items():
        name = encodable(key) if isinstance(key, str) else key
        owner = field if field is not None else name
        if name != key:
            fields.setdefault(owner, set()).add(_SURROGATE_NOTE)
        if name in out:
            fields.setdefault(owner, set()).add("two keys are one once repaired; the first kept")
            continue
        out[name] = _repaired_str(value, owner, fields) if isinstance(value, str) else value
    return out


def _repaired_str(text: str, field: str, fields: dict[str, set[str]]) -> str:
    if isinstance(text, LongInt):
        fields.setdefault(field, set()).add(f"{text[1:-1]}, past what can be read; kept as text")
        return str(text)
    fixed = encodable(text)
    if fixed != text:
        fields.setdefault(field, set()).add(_SURROGATE_NOTE)
    return fixed


def _shown(field: str, chars: int = 60) -> str:
    return field if len(field) <= chars else field[:chars] + "…"


_SURROGATE_NOTE = "lone surrogate escapes replaced with U+FFFD"
