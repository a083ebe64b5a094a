"""One log record -> (step, wall time or None, {metric: value}); pure, one per source."""
from __future__ import annotations

import math
import re
from numbers import Real

from loaders import limits
from loaders.limits import OverBudget
from loaders.parse.record import parse_object

Point = tuple[int, float | None, dict[str, float]]
STEP_KEYS = ("step", "global_step", "_step", "iteration")
TIME_KEYS = ("time", "timestamp", "_timestamp", "wall_time")
_CONSOLE = re.compile(r"(?:^|\s)step:(\d+)\s+-\s+(.*)$")
_NUMBER = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf)"
_CONSOLE_ITEM = re.compile(rf"\s*([^:\s][^:]*?):\s*({_NUMBER})\s*$", re.IGNORECASE)
_ROLL = re.compile(r"metrics_tag:\s*(\{.*\})\s*$")
MAX_STEP = 2**63 - 1  # steps index the metric frame as int64
_STEP_DIGITS = len(str(MAX_STEP)) - 1  # a console step this long always fits


def _number(value: object, name: str = "", dropped: list[str] | None = None) -> float | None:
    """A real number as a float; ±inf stays (a loss that blew up is worth seeing), NaN is
    left out (in the frame it is a missing value anyway).  An int beyond float's range (a
    JSON number with 400 digits) is left out and its name added to `dropped`."""
    if isinstance(value, bool) or not isinstance(value, Real):
        return None
    try:
        value = float(value)
    except OverflowError:
        if dropped is not None:
            dropped.append(name)
        return None
    return None if math.isnan(value) else value


def flatten(data: dict, prefix: str = "", dropped: list[str] | None = None) -> dict[str, float]:
    """Numeric leaves of a nested dict, keyed by '/'-joined paths, in the record's order.

    Its own stack, not recursion: a record nested past limits.MAX_DEPTH raises OverBudget (a
    990-deep one made RecursionError end the whole metrics load)."""
    out: dict[str, float] = {}
    stack = [(iter(data.items()), prefix)]
    while stack:
        items, path = stack[-1]
        for key, value in items:
            name = f"{path}{key}"
            if isinstance(value, dict):
                if len(stack) >= limits.MAX_DEPTH:
                    raise OverBudget("nesting depth", len(stack) + 1, limits.MAX_DEPTH)
                stack.append((iter(value.items()), f"{name}/"))
                break
            if (number := _number(value, name, dropped)) is not None:
                out[name] = number
        else:
            stack.pop()
    return out


def _step_of(record: dict, dropped: list[str] | None = None) -> int | None:
    for key in STEP_KEYS:
        value = record.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if abs(value) <= MAX_STEP:  # False for NaN; a step must fit the frame's int64 index
            return int(value)
        if dropped is not None and not (isinstance(value, float) and math.isnan(value)):
            dropped.append(key)
    return None


def from_json(record: dict, dropped: list[str] | None = None) -> Point | None:
    """verl file logger ({"step", "data": {...}}), prime-rl and generic flat dicts.

    Names of values too large for a float (and of a step beyond int64) go to `dropped`."""
    step = _step_of(record, dropped)
    if step is None:
        return None
    when = next((_number(record[k], k, dropped) for k in TIME_KEYS if k in record), None)
    if when is not None and not math.isfinite(when):
        when = None  # an infinite wall time cannot be placed on the time axis
    body = record["data"] if isinstance(record.get("data"), dict) else {
        k: v for k, v in record.items() if k not in STEP_KEYS and k not in TIME_KEYS}
    values = flatten(body, dropped=dropped)
    return (step, when, values) if values else None


def from_console(line: str) -> Point | None:
    """verl's console: `step:N - key:value - key:value`."""
    match = _CONSOLE.search(line)
    if not match or len(match.group(1)) > _STEP_DIGITS:
        return None
    values = {}
    for part in match.group(2).split(" - "):
        item = _CONSOLE_ITEM.match(part)
        # float() of a too-long literal is inf, never an error; ±inf stays, NaN is missing
        if item and not math.isnan(value := float(item.group(2))):
            values[item.group(1).strip()] = value
    return (int(match.group(1)), None, values) if values else None


def from_roll(line: str, dropped: list[str] | None = None) -> Point | None:
    """ROLL's trackers: `<log prefix> metrics_tag: {"step": N, "metrics": {...}}`."""
    match = _ROLL.search(line)
    if not match:
        return None
    try:
        record = parse_object(match.group(1).encode())
    except ValueError:  # BadLine, or an int too long for Python to convert at all
        return None
    step = _step_of(record, dropped)
    metrics = record.get("metrics")
    if step is None or not isinstance(metrics, dict):
        return None
    return step, None, flatten(metrics, dropped=dropped)
