"""Alert thresholds: documented defaults, overridable from a TOML file.

A file `alerts.toml` in the run dir (or a path given with --alerts-config) may set any key
of DEFAULTS under a table named after its rule, e.g.

    [divergence]
    k = 6.0
    [memory]
    reserved_fraction = 0.9
"""
from __future__ import annotations

import copy
import tomllib
from pathlib import Path

CONFIG_NAME = "alerts.toml"
DEFAULTS: dict[str, dict[str, float]] = {
    # shared by every spike test: baseline over the previous `window` steps
    "baseline": {"window": 20, "min_history": 5, "rel_floor": 0.05},
    # KL spike, grad-norm spike, entropy collapse: all three at once is strong
    "divergence": {"k": 5.0, "same_step_slack": 1},
    # reserved memory near the device total while reserved - allocated widens
    "memory": {"reserved_fraction": 0.92, "gap_growth_steps": 3},
    # tokens per step jump well above their recent level
    "batch_runaway": {"k": 5.0, "min_ratio": 1.5},
    # one rank's tokens deviate from the median rank of the same step
    "rank_imbalance": {"rel": 0.35, "k": 5.0, "min_ranks": 3},
    # abort / timeout / truncation ratios rising
    "inference": {"k": 5.0, "min_ratio": 0.05},
    # reward rising while length explodes or per-token KL rises sharply
    "reward_hacking": {"k": 5.0, "reward_window": 5},
    # share of GRPO groups (same prompt, same step) whose rewards are all equal
    "zero_variance": {"warn_share": 0.5, "strong_share": 0.9, "min_groups": 4},
}


def load_config(path: Path | None = None) -> dict[str, dict[str, float]]:
    """DEFAULTS updated from a TOML file; unknown tables or keys raise ValueError."""
    config = copy.deepcopy(DEFAULTS)
    if path is None or not path.exists():
        return config
    with open(path, "rb") as handle:
        overrides = tomllib.load(handle)
    for rule, values in overrides.items():
        if rule not in config or not isinstance(values, dict):
            raise ValueError(f"{path}: unknown alert rule [{rule}]")
        for key, value in values.items():
            if key not in config[rule]:
                raise ValueError(f"{path}: unknown setting {rule}.{key}")
            config[rule][key] = float(value)
    return config
