"""Columns for the keys the schema does not know: one column per key, never two in one.

A scalar key keeps its name (prefixed `extra_` when a board column has it); a token array's
mean goes to `KEY_mean`.  Two keys can still land on one name (`x` and `x_mean`; `rank` and
`extra_rank`): then the name goes to the key written as is, then to the prefixed key, then
to the derived mean (by key name within each), and every later claimant gets `_2`, `_3`, …
appended and a problem.  The outcome depends on the line's keys, not on their order.
"""
from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable
from typing import NamedTuple

import numpy as np

from loaders import schema as S
from loaders.index import kernel
from loaders.index.block_fields import BlockFields
from loaders.index.lines import MISSING
from loaders.index.text_preview import previews
from loaders.parse.arrays import BadField, float_array, is_number_list
from loaders.parse.text import text_of

FieldProblem = Callable[[str], None]
_RESERVED = S.BOARD_COLUMNS
LITERAL, PREFIXED, DERIVED = 0, 1, 2  # who gets a contested name first


class Claim(NamedTuple):
    tier: int
    key: str
    column: str
    value: object


def extra_column(key: str) -> str:
    """Column name for a key the schema does not know; prefixed when it would collide."""
    return f"extra_{key}" if key in _RESERVED else key


# the board reads these (truncation signals), so they are kept before any other
_FIRST = tuple(extra_column(k) for k in ("truncated", "is_truncated", "finish_reason",
                                          "stop_reason", "status", "rollout_status",
                                          *S.LATENCY_COLUMNS))


def kept_extras(names: Iterable[str]) -> list[str]:
    """The extra columns a run keeps: those the board reads, then by name, up to
    MAX_EXTRA_COLUMNS.  By name, so the choice depends on which keys exist, not on the
    order files were parsed in (a partial refresh keeps what a full parse would)."""
    names = set(names)
    first = [name for name in _FIRST if name in names][: S.MAX_EXTRA_COLUMNS]
    return first + heapq.nsmallest(S.MAX_EXTRA_COLUMNS - len(first), names.difference(first))


def extras(obj: dict, problem: FieldProblem) -> dict[str, object]:
    """{column: value} for every key of obj the schema does not know."""
    claims = [claim for key, value in obj.items() if key not in S.KNOWN_KEYS
              and (claim := _claim(key, value, problem)) is not None]
    if len({c.column for c in claims}) == len(claims):
        return {c.column: c.value for c in claims}
    return _resolve(claims, problem)


def _claim(key: str, value: object, problem: FieldProblem) -> Claim | None:
    column = extra_column(key)
    tier = LITERAL if column == key else PREFIXED
    if value is None or isinstance(value, (bool, int, float)):
        try:
            return Claim(tier, key, column, math.nan if value is None else float(value))
        except OverflowError:
            problem(f"{key}: number out of range")
            return None
    if is_number_list(value):
        try:
            arr = float_array(value)
        except BadField as err:
            problem(f"{key}: {err}")
            return None
        finite = arr[np.isfinite(arr)]
        mean = float(finite.mean()) if finite.size else math.nan
        return Claim(DERIVED, key, extra_column(S.extra_array_mean(key)), mean)
    return Claim(tier, key, column, text_of(value)[: S.PREVIEW_CHARS])


def _resolve(claims: list[Claim], problem: FieldProblem) -> dict[str, object]:
    out: dict[str, object] = {}
    owners: dict[str, str] = {}
    for claim in sorted(claims, key=lambda c: (c.tier, c.key)):
        name = claim.column
        if name in out:
            suffix = 2
            while f"{claim.column}_{suffix}" in out:
                suffix += 1
            name = f"{claim.column}_{suffix}"
            problem(f"{_what(claim)} would be column {claim.column!r}, already used by "
                    f"{owners[claim.column]}; stored as {name!r}")
        out[name] = claim.value
        owners[name] = _what(claim)
    return out


def _what(claim: Claim) -> str:
    return f"the mean of {claim.key!r}" if claim.tier == DERIVED else f"the key {claim.key!r}"


class _Missing:
    """A key a sample does not have (None is a value: a null)."""


_MISSING = _Missing()
_NUMBER_TYPES = frozenset({float, int, bool, type(None), _Missing})
_TEXT_TYPES = frozenset({str, _Missing})
Report = Callable[[int, str], None]  # (sample in the batch, reason)


def extra_columns(objs: list[dict], keys: set[str], report: Report) -> dict[str, list]:
    """extras() of every sample, as columns (None where a sample has no value): a key whose
    values are all numbers, or all strings, is read for the whole batch at once."""
    unknown = sorted(keys.difference(S.KNOWN_KEYS))
    if _may_share_a_column(unknown):  # only the per-sample rules settle who gets a name
        rows = [extras(o, lambda reason, i=i: report(i, reason)) for i, o in enumerate(objs)]
        names = dict.fromkeys(name for row in rows for name in row)
        return {name: [row.get(name) for row in rows] for name in names}
    out: dict[str, list] = {}
    for key in unknown:
        raw = keys.raw(key) if isinstance(keys, BlockFields) else None
        if raw is not None and kernel.all_strings(raw):  # a text in every sample (a uid)
            out[extra_column(key)] = previews(raw, tail=False)[1]
            continue
        values = _values(objs, key, keys)
        kinds = set(map(type, values))
        if kinds <= _TEXT_TYPES:
            out[extra_column(key)] = [None if v is _MISSING else v[: S.PREVIEW_CHARS]
                                      for v in values]
        elif not (kinds <= _NUMBER_TYPES and _numbers_into(out, key, values)):
            _claims_into(out, key, values, report)
    return out


def _values(objs: list[dict], key: str, keys: set[str]) -> list:
    """The key's value in every sample, _MISSING where it has none."""
    if isinstance(keys, BlockFields):
        return [_MISSING if v is MISSING else v for v in keys.raw(key)]
    return [o.get(key, _MISSING) for o in objs]


def _may_share_a_column(keys: list[str]) -> bool:
    names = [extra_column(k) for k in keys] + [extra_column(S.extra_array_mean(k)) for k in keys]
    return len(set(names)) < len(names)


def _numbers_into(out: dict[str, list], key: str, values: list) -> bool:
    try:
        out[extra_column(key)] = [None if v is _MISSING else math.nan if v is None
                                  else float(v) for v in values]
    except OverflowError:  # the per-sample claims name the value
        return False
    return True


def _claims_into(out: dict[str, list], key: str, values: list, report: Report) -> None:
    for i, value in enumerate(values):
        if value is _MISSING:
            continue
        claim = _claim(key, value, lambda reason, i=i: report(i, reason))
        if claim is not None:
            out.setdefault(claim.column, [None] * len(values))[i] = claim.value
