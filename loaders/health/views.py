"""Data for the Health panels: stage times, memory, per-rank tables and data quality."""
from __future__ import annotations

import re

import pandas as pd

from loaders import schema as S

STAGES = (  # (label, pattern on the part after time/ or timing_s/), in pipeline order
    ("rollout / generation", r"gen|rollout|generate|sampl"),
    ("reward", r"reward|score"),
    ("ref / old logprob", r"ref|old_log_prob|logprob"),
    ("values", r"value"),
    ("advantages", r"adv"),
    ("actor update", r"update_actor|actor|policy_train|train_step"),
    ("critic update", r"update_critic|critic"),
    ("checkpoint", r"save|checkpoint|ckpt|testing"),
)
_TIMING = re.compile(r"^(time|timing_s|timing)/", re.IGNORECASE)
_TOTAL = re.compile(r"(^|/)(step|total|iteration)(_time)?$", re.IGNORECASE)
RANK_VALUES = {"samples": None, "tokens": S.RESPONSE_LEN, "mean response length": S.RESPONSE_LEN,
               "mean reward": S.REWARD}


def stage_times(metrics: pd.DataFrame) -> pd.DataFrame:
    """Seconds per stage per step (columns in pipeline order), summing a stage's timers."""
    timers = [c for c in metrics.columns if _TIMING.search(str(c)) and not _TOTAL.search(str(c))]
    out = pd.DataFrame(index=metrics.index)
    used = set()
    for label, pattern in STAGES:
        regex = re.compile(pattern, re.IGNORECASE)
        columns = [c for c in timers if c not in used and regex.search(_TIMING.sub("", c))]
        used.update(columns)
        if columns:
            out[label] = metrics[columns].sum(axis=1, min_count=1)
    rest = [c for c in timers if c not in used]
    if rest:
        out["other"] = metrics[rest].sum(axis=1, min_count=1)
    return out


def memory_columns(metrics: pd.DataFrame) -> dict[str, list[str]]:
    """Memory metrics grouped as allocated / reserved / max / total (any device)."""
    groups: dict[str, list[str]] = {"allocated": [], "reserved": [], "max": [], "total": []}
    for column in metrics.columns:
        name = str(column).lower()
        if "memory" not in name and "mem/" not in name:
            continue
        kind = ("total" if re.search(r"total|capacity", name) else
                "reserved" if "reserved" in name else
                "max" if "max" in name or "peak" in name else
                "allocated" if "alloc" in name else None)
        if kind:
            groups[kind].append(str(column))
    return {k: v for k, v in groups.items() if v}


_DEVICE = re.compile(r"(?:gpu|device|dev|cuda|rank)[_:/-]?(\d+)", re.IGNORECASE)


def device_memory(metrics: pd.DataFrame) -> pd.DataFrame:
    """device x step of the largest memory figure each device logged (empty if none)."""
    per_device: dict[str, list[str]] = {}
    for column in metrics.columns:
        name = str(column)
        match = _DEVICE.search(name)
        if match and ("memory" in name.lower() or "mem/" in name.lower()):
            per_device.setdefault(f"device {match.group(1)}", []).append(name)
    if not per_device:
        return pd.DataFrame()
    rows = {device: metrics[columns].max(axis=1) for device, columns in per_device.items()}
    return pd.DataFrame(rows).T.astype(float)


def rank_table(samples: pd.DataFrame, value: str) -> pd.DataFrame:
    """rank x step for one of RANK_VALUES (from the per-rank dump files)."""
    grouped = samples.groupby([S.RANK, S.STEP])
    if value == "samples":
        table = grouped.size()
    elif value == "tokens":
        table = grouped[S.RESPONSE_LEN].sum()
    else:
        table = grouped[RANK_VALUES[value]].mean()
    return table.unstack(S.STEP).astype(float)


def quality(samples: pd.DataFrame, metrics: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per step: prompt/response length min/mean/max, truncation and abort ratios,
    non-finite values and length mismatches."""
    grouped = samples.groupby(S.STEP)
    out = pd.DataFrame({
        "prompt chars min": grouped[S.PROMPT_CHARS].min(),
        "prompt chars mean": grouped[S.PROMPT_CHARS].mean(),
        "prompt chars max": grouped[S.PROMPT_CHARS].max(),
        "response tokens min": grouped[S.RESPONSE_LEN].min(),
        "response tokens mean": grouped[S.RESPONSE_LEN].mean(),
        "response tokens max": grouped[S.RESPONSE_LEN].max(),
        "truncation ratio": grouped[S.TRUNCATED].mean(),
        "NaN/Inf values": grouped[S.NAN_COUNT].sum(),
        "length mismatches": grouped[S.LENGTH_MISMATCH].sum(),
    })
    if metrics is not None:
        aborted = [c for c in metrics.columns if re.search(r"abort", str(c), re.IGNORECASE)]
        if aborted:
            out["aborted ratio"] = metrics[aborted[0]].reindex(out.index)
    return out
