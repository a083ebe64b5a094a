"""Alert thresholds: documented defaults, overridable from a TOML file.

A file `alerts.toml` in the run dir (or a path given with --alerts-config) may set any key
of DEFAULTS under a table named after its rule, e.g.

    [divergence]
    k = 6.0
    [memory]
    reserved_fraction = 0.9

Each value is checked against its default's type and LIMITS; a bad one is left out with a
note (the rest of the file still applies), as are unknown tables and keys.
"""
from __future__ import annotations

import copy
import math
import os
import stat
import tomllib
from pathlib import Path

CONFIG_NAME = "alerts.toml"
MAX_CONFIG_BYTES = 1 << 20  # an alerts file is a few lines: more is not one (or never ends)
MAX_NOTES = 20  # about one file; the rest are counted
DEFAULTS: dict[str, dict[str, float]] = {
    # every test compares a step with the robust linear trend of the previous `window`
    # steps (loaders.health.robust); `k` is in spreads of that trend, the step's own
    # standard error included when the signal is a mean over the dump's samples
    # spreads are floored at rel_floor x |trend|, and for shares (abort ratio, truncation,
    # zero-variance groups, ...) at share_floor
    "baseline": {"window": 20, "min_history": 8, "rel_floor": 0.01, "share_floor": 0.002},
    # a hit: a rule's `k` spreads at one step, `sustained` x k at two steps in a row, or
    # 0.75 x sustained x k at three. A
    # hit is weak; strong needs three of a rule's signals within `agree_slack` steps, or
    # two on a step after a hit, or one that reached its rule's `extreme` and held at k
    # for `persist` steps
    "severity": {"persist": 2, "agree_slack": 1, "sustained": 0.6},
    # consecutive hits of one rule (at most `max_gap` quiet steps apart) are one incident
    "incidents": {"max_gap": 1},
    # policy KL up, grad norm up, entropy down
    "divergence": {"k": 5.0, "extreme": 8.0},
    # KL to the reference above its trend (its drift accelerating)
    "kl_drift": {"k": 5.0, "extreme": 8.0},
    # reserved memory creeping above its trend; near the device total while the
    # reserved - allocated gap widens for `gap_growth_steps` steps is strong
    "memory": {"k": 5.0, "extreme": 8.0, "reserved_fraction": 0.92, "gap_growth_steps": 3},
    # tokens per step jump above their trend and to min_ratio x the expected
    "batch_runaway": {"k": 5.0, "extreme": 8.0, "min_ratio": 1.5},
    # one rank's tokens in a step differ from the median rank's by more than k standard
    # errors and by `rel` of it (needs min_ranks ranks)
    "rank_imbalance": {"rel": 0.35, "k": 5.0, "extreme": 8.0, "min_ranks": 3},
    # abort / timeout / truncation ratios above their trend and at least min_ratio
    "inference": {"k": 5.0, "extreme": 8.0, "min_ratio": 0.05},
    # reward rising significantly (slope t >= rise_t over reward_window steps, or 2 spreads
    # above its trend) while
    # response length or KL to the reference is above its trend, for `persist` steps
    "reward_hacking": {"k": 5.0, "extreme": 8.0, "reward_window": 10, "rise_t": 2.0},
    # reward rising as above while the step's largest near-duplicate response cluster grows
    # above its trend (its clusters per 100 responses falling), for `persist` steps
    "diversity_collapse": {"k": 5.0, "extreme": 8.0, "reward_window": 10, "rise_t": 2.0},
    # mismatch KL, importance ratio or its share outside [0.5, 2] off their trend
    "mismatch": {"k": 5.0, "extreme": 8.0},
    # share of heavily repetitive responses up (truncation, no end-of-sequence, agreeing)
    "degenerate": {"k": 5.0, "extreme": 8.0},
    # zero-variance share of groups up and within-group reward std down (>= min_groups)
    "group_collapse": {"k": 5.0, "extreme": 8.0, "min_groups": 4},
    # share of GRPO groups (same prompt, same step) whose rewards are all equal, as a level
    "zero_variance": {"warn_share": 0.8, "strong_share": 0.95, "min_groups": 8},
    # async RL: a sample drawn by weights more than max_lag updates old (the run's bound on
    # off-policyness broke, or the rollout queue backed up); strong when a tenth of the
    # step's samples are (its 90th percentile lag is past the bound)
    "stale_policy": {"max_lag": 4},
}
_K = (0.01, 1e6)  # spreads: below, every wobble fires; far above, the rule is off anyway
_STEPS = (1, 10_000)
_SPIKE = {"k": _K, "extreme": _K}
# (low, high), inclusive: outside them a rule breaks (a window of 0) or means nothing
LIMITS: dict[str, dict[str, tuple[float, float]]] = {
    "baseline": {"window": (2, 10_000), "min_history": (2, 10_000), "rel_floor": (0.0, 1e3),
                 "share_floor": (0.0, 1.0)},
    "severity": {"persist": _STEPS, "agree_slack": (0, 10_000), "sustained": (0.01, 1.0)},
    "incidents": {"max_gap": (0, 10_000)},
    "divergence": _SPIKE,
    "kl_drift": _SPIKE,
    "memory": {**_SPIKE, "reserved_fraction": (0.01, 1.0), "gap_growth_steps": _STEPS},
    "batch_runaway": {**_SPIKE, "min_ratio": (0.0, 1e6)},
    "rank_imbalance": {**_SPIKE, "rel": (0.0, 1e6), "min_ranks": (2, 1_000_000)},
    "inference": {**_SPIKE, "min_ratio": (0.0, 1.0)},
    "reward_hacking": {**_SPIKE, "reward_window": (3, 10_000), "rise_t": (0.0, 1e3)},
    "diversity_collapse": {**_SPIKE, "reward_window": (3, 10_000), "rise_t": (0.0, 1e3)},
    "mismatch": _SPIKE,
    "degenerate": _SPIKE,
    "group_collapse": {**_SPIKE, "min_groups": (1, 10**9)},
    "zero_variance": {"warn_share": (0.0, 1.0), "strong_share": (0.0, 1.0),
                      "min_groups": (1, 10**9)},
    "stale_policy": {"max_lag": (0, 1_000_000)},
}
_TYPES = {"str": "text", "list": "a list", "dict": "a table", "bool": "true/false",
          "datetime": "a date", "date": "a date", "time": "a time of day"}


class _Ignored(Exception):
    """Why the whole file is not used."""


def load_config(path: Path | None = None, notes: list[str] | None = None,
                within: Path | None = None) -> dict[str, dict[str, float]]:
    """DEFAULTS updated from a TOML file.

    With `notes`, each problem (an unreadable file, an unknown table or key, a value of the
    wrong type or out of LIMITS) is added there and everything else still applies; without,
    the first one raises ValueError.  `within` is the run dir the file belongs to: a link
    leading out of it is not followed (an explicit --alerts-config path has none).
    """
    config = copy.deepcopy(DEFAULTS)
    if path is None or not os.path.lexists(path):
        return config
    found: list[str] = []
    try:
        _apply(_read(Path(path), within), config, path.name, found)
    except _Ignored as why:
        found.append(f"{path.name} ignored: {why}")
    if found and notes is None:
        raise ValueError(found[0])
    if len(found) > MAX_NOTES:
        found[MAX_NOTES:] = [f"{path.name}: {len(found) - MAX_NOTES} more problems not listed"]
    if notes is not None:
        notes.extend(found)
    return config


def _read(path: Path, within: Path | None) -> dict:
    """The file's tables; _Ignored when it is not a small regular file of TOML in reach."""
    real = os.path.realpath(path)
    if within is not None and not _is_under(real, os.path.realpath(within)):
        raise _Ignored("it is a link leading outside the run dir, which is not followed")
    try:
        data = _read_capped(real)
        return tomllib.loads(data.decode("utf-8"))
    except OSError as err:
        raise _Ignored(f"cannot read it: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise _Ignored("it is not UTF-8 text") from None
    except (ValueError, RecursionError) as err:  # TOMLDecodeError is a ValueError
        raise _Ignored(f"not valid TOML: {_shown(str(err), 200)}") from None


def _is_under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _read_capped(real: str) -> bytes:
    # O_NONBLOCK: a FIFO must not block the open; O_NOFOLLOW: `real` was checked, so a link
    # swapped in since is refused; the fstat then turns away FIFOs, devices and dirs
    fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise _Ignored("it is not a regular file")
        data = handle.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise _Ignored(f"it is larger than {MAX_CONFIG_BYTES >> 20} MB")
    return data


def _apply(tables: dict, config: dict, name: str, found: list[str]) -> None:
    for rule, values in tables.items():
        if rule not in config:
            found.append(f"{name}: unknown rule [{_shown(rule)}] ignored "
                         f"(known: {', '.join(config)})")
        elif not isinstance(values, dict):
            found.append(f"{name}: {rule} = {_shown(repr(values))} ignored "
                         f"(expected a table [{rule}] of settings)")
        else:
            for key, value in values.items():
                _set(config[rule], rule, key, value, name, found)
    base = config["baseline"]
    if base["min_history"] > base["window"]:  # the rolling baseline refuses it
        found.append(f"{name}: baseline.min_history = {base['min_history']} is more than "
                     f"baseline.window = {base['window']}; {base['window']} used")
        base["min_history"] = base["window"]


def _set(settings: dict, rule: str, key: str, value: object, name: str,
         found: list[str]) -> None:
    if key not in settings:
        found.append(f"{name}: unknown setting {rule}.{_shown(key)} ignored "
                     f"(known in [{rule}]: {', '.join(settings)})")
        return
    default = DEFAULTS[rule][key]
    why = _invalid(value, default, LIMITS[rule][key])
    if why is None:
        settings[key] = type(default)(value)
    else:
        found.append(f"{name}: {rule}.{key} = {_shown(repr(value))} ignored ({why}); "
                     f"the default {default} applies")


def _invalid(value: object, default: float, limits: tuple[float, float]) -> str | None:
    """Why value cannot stand in for default, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"a number is expected, not {_TYPES.get(type(value).__name__, 'that')}"
    if isinstance(value, float) and not math.isfinite(value):
        return "not a finite number"
    if isinstance(default, int) and value != int(value):
        return "a whole number is expected"
    low, high = limits
    if not low <= value <= high:
        return f"outside {low:g} to {high:g}"
    return None


def _shown(text: str, limit: int = 60) -> str:
    """A name or value from the file, one line and short (the pages escape it as well)."""
    text = text if text.isprintable() else repr(text)[1:-1]
    return text if len(text) <= limit else text[:limit] + "…"
