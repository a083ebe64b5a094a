"""One log record -> (step, wall time or None, {metric: value}); pure, one per source."""
from __future__ import annotations

import math
import re
from numbers import Real

from loaders.parse.record import BadLine, parse_object

Point = tuple[int, float | None, dict[str, float]]
STEP_KEYS = ("step", "global_step", "_step", "iteration")
TIME_KEYS = ("time", "timestamp", "_timestamp", "wall_time")
_CONSOLE = re.compile(r"(?:^|\s)step:(\d+)\s+-\s+(.*)$")
_NUMBER = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf)"
_CONSOLE_ITEM = re.compile(rf"\s*([^:\s][^:]*?):\s*({_NUMBER})\s*$", re.IGNORECASE)
_ROLL = re.compile(r"metrics_tag:\s*(\{.*\})\s*$")


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, Real):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def flatten(data: dict, prefix: str = "") -> dict[str, float]:
    """Numeric leaves of a nested dict, keyed by '/'-joined paths."""
    out = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, f"{name}/"))
        elif (number := _number(value)) is not None:
            out[name] = number
    return out


def _step_of(record: dict) -> int | None:
    for key in STEP_KEYS:
        value = record.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(
                value):
            return int(value)
    return None


def from_json(record: dict) -> Point | None:
    """verl file logger ({"step", "data": {...}}), prime-rl and generic flat dicts."""
    step = _step_of(record)
    if step is None:
        return None
    when = next((_number(record[k]) for k in TIME_KEYS if k in record), None)
    body = record["data"] if isinstance(record.get("data"), dict) else {
        k: v for k, v in record.items() if k not in STEP_KEYS and k not in TIME_KEYS}
    values = flatten(body)
    return (step, when, values) if values else None


def from_console(line: str) -> Point | None:
    """verl's console: `step:N - key:value - key:value`."""
    match = _CONSOLE.search(line)
    if not match:
        return None
    values = {}
    for part in match.group(2).split(" - "):
        item = _CONSOLE_ITEM.match(part)
        if item and math.isfinite(float(item.group(2))):
            values[item.group(1).strip()] = float(item.group(2))
    return (int(match.group(1)), None, values) if values else None


def from_roll(line: str) -> Point | None:
    """ROLL's trackers: `<log prefix> metrics_tag: {"step": N, "metrics": {...}}`."""
    match = _ROLL.search(line)
    if not match:
        return None
    try:
        record = parse_object(match.group(1).encode())
    except BadLine:
        return None
    step = _step_of(record)
    metrics = record.get("metrics")
    if step is None or not isinstance(metrics, dict):
        return None
    return step, None, flatten(metrics)
