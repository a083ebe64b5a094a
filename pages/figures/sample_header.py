"""Pure builders of the Sample page's header: the open sample's own figures against its
step's means, and its place in the Responses table's order."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import pandas as pd

from loaders import schema as S

ABSENT = "—"


class Figure(NamedTuple):
    label: str
    value: str  # the sample's own value, or ABSENT
    delta: str | None  # "+359 vs step mean 661.7"; None when either side is missing


class _Field(NamedTuple):
    label: str
    column: str
    count: bool  # a length: an integer, and 0 in every row of the step means "not logged"


def _fields(estimator: str) -> tuple[_Field, ...]:
    return (_Field("reward", S.REWARD, False), _Field("reference reward", S.REF_REWARD, False),
            _Field("reward gap (RL − ref)", S.REWARD_GAP, False),
            _Field(f"KL {estimator} (token mean)", S.kl_mean(estimator), False),
            _Field("response tokens", S.RESPONSE_LEN, True),
            _Field("response chars", S.RESPONSE_CHARS, True),
            _Field("reference chars", S.REF_RESPONSE_CHARS, True),
            _Field("policy lag", S.POLICY_LAG, False))

# shown only where the run has it: an on-policy run's samples have no lag to show
_WHEN_KNOWN = frozenset({S.POLICY_LAG})


def _number(row: pd.Series | dict, column: str) -> float:
    """The value as a float (an infinity too: a reward of inf is the dump's, not missing);
    NaN where there is none."""
    try:
        return float(row[column])
    except (KeyError, TypeError, ValueError):
        return math.nan


def sample_figures(row: pd.Series | dict, stats: pd.Series | dict | None,
                   estimator: str = S.K3, nan: frozenset[str] = frozenset()) -> list[Figure]:
    """The sample's reward, reference reward, gap, mean KL and lengths, each beside the
    step's mean.  `row` is the sample's summary row (what the Responses table shows, so the
    two pages never differ); `stats` the step's row of the run's step stats.

    Token and reference lengths are 0 for a dump without token arrays or references
    (verl, TRL, NeMo-RL): when the whole step has 0 they read as absent, not as 0.  A
    column in `nan` (the sample's record holds NaN there) reads NaN, not as absent."""
    stats = {} if stats is None else stats
    out = []
    for field in _fields(estimator):
        value = _number(row, field.column)
        mean = _number(stats, S.stat(field.column, "mean"))
        if field.count and value == 0 and not _number(stats, S.stat(field.column, "max")) > 0:
            value = mean = math.nan
        if field.column in _WHEN_KNOWN and math.isnan(value) and math.isnan(mean):
            continue
        out.append(_figure(field, value, mean, field.column in nan))
    return out


def _figure(field: _Field, value: float, mean: float, nan: bool = False) -> Figure:
    if math.isnan(value):
        return Figure(field.label, "NaN" if nan else ABSENT, None)
    if field.count:
        text = f"{int(value):,}"
        delta = f"{_tenths(value - mean, '+')} vs step mean {_tenths(mean)}"
    else:
        text = f"{value:+.4g}" if field.column == S.REWARD_GAP else f"{value:.4g}"
        # three digits: a chip four columns wide cut "-0.0001508 vs step mean 0.0097…"
        delta = f"{_difference(value, mean):+.3g} vs step mean {mean:.3g}"
    return Figure(field.label, text, delta if math.isfinite(mean) and math.isfinite(
        value) else None)


def _difference(value: float, mean: float) -> float:
    """value - mean, 0 when it is only rounding (a mean of 0.1, 0.3, 0.5 is not 0.3)."""
    difference = value - mean
    return 0.0 if abs(difference) <= 1e-9 * max(abs(value), abs(mean), 1.0) else difference


def _tenths(value: float, sign: str = "") -> str:
    """A mean of counts: one decimal, none when it is whole ("661.7", "+4", "1,024")."""
    whole = round(value)  # an int: never "-0"
    return f"{whole:{sign},}" if round(value, 1) == whole else f"{value:{sign},.1f}"


# ---- next / previous sample --------------------------------------------------------------
class Place(NamedTuple):
    index: int  # 0-based position of the sample in the order
    total: int
    previous: str | None  # the key before it, None at the start
    next: str | None  # the key after it, None at the end


def place_in(order: Sequence[str], key: str) -> Place | None:
    """Where `key` sits in `order` (None when it is not in it)."""
    try:
        at = list(order).index(key)
    except ValueError:
        return None
    return Place(at, len(order), order[at - 1] if at > 0 else None,
                 order[at + 1] if at + 1 < len(order) else None)


def order_label(sort_label: str, descending: bool, shown: int, total: int) -> str:
    """How the Responses table orders the step, e.g. "sort by reward, descending; 12 of 40
    samples after its filters"."""
    how = f"sort by {sort_label}, {'descending' if descending else 'ascending'}"
    return how if shown >= total else f"{how}; {shown:,} of {total:,} samples after its filters"


def no_text(title: str, absent: bool) -> str:
    """What an empty text box says: the dump has no such text for the sample (no key, or
    null), or has an empty one."""
    return f"(the dump has no {title.lower()} for this sample)" if absent else "(empty)"
