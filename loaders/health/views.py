"""Data for the Health panels: stage times, memory, per-rank tables and data quality."""
from __future__ import annotations

import pandas as pd

from loaders import schema as S
from loaders.index.numbers import Numbers, stacked
from loaders.metric_names import memory_device, memory_kind, metric_for, stage_columns

RANK_READS = (S.RANK, S.STEP, S.RESPONSE_LEN, S.REWARD)  # what rank_table reads
QUALITY_READS = (S.STEP, S.PROMPT_CHARS, S.RESPONSE_LEN, S.TRUNCATED, S.TRUNCATION_INFERRED,
                 S.NAN_COUNT, S.LENGTH_MISMATCH)  # what quality reads
RANK_VALUES = {"samples": None, "tokens": S.RESPONSE_LEN, "mean response length": S.RESPONSE_LEN,
               "mean reward": S.REWARD}


def stage_times(metrics: pd.DataFrame) -> pd.DataFrame:
    """Seconds per stage per step (columns in pipeline order), summing a stage's timers."""
    out = pd.DataFrame(index=metrics.index)
    for label, columns in stage_columns(str(c) for c in metrics.columns).items():
        out[label] = metrics[columns].sum(axis=1, min_count=1)
    return out


def memory_columns(metrics: pd.DataFrame) -> dict[str, list[str]]:
    """Memory metrics grouped as allocated / reserved / max / total (any device)."""
    groups: dict[str, list[str]] = {"allocated": [], "reserved": [], "max": [], "total": []}
    for name in (str(c) for c in metrics.columns):
        kind = memory_kind(name)
        if kind:
            groups[kind].append(name)
    return {k: v for k, v in groups.items() if v}


def device_memory(metrics: pd.DataFrame) -> pd.DataFrame:
    """device x step of the largest memory figure each device logged (empty if none)."""
    per_device: dict[str, list[str]] = {}
    for name in (str(c) for c in metrics.columns):
        device = memory_device(name)
        if device is not None:
            per_device.setdefault(f"device {device}", []).append(name)
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
        # the part of it the length cap inferred, where the dump said nothing
        "truncation inferred": grouped[S.TRUNCATION_INFERRED].mean(),
        "NaN/Inf values": grouped[S.NAN_COUNT].sum(),
        "length mismatches": grouped[S.LENGTH_MISMATCH].sum(),
    })
    return with_aborted(out, metrics)


def with_aborted(table: pd.DataFrame, metrics: pd.DataFrame | None) -> pd.DataFrame:
    """The quality table with the trainer's abort ratio by step, when its metrics log one."""
    if metrics is None:
        return table
    aborted = metric_for((str(c) for c in metrics.columns), S.H_ABORT)
    if aborted is not None:  # the same column the inference_anomaly alert reads
        table = table.assign(**{"aborted ratio": metrics[aborted].reindex(table.index)})
    return table


def rank_table_of(numbers: Numbers, value: str) -> pd.DataFrame:
    """rank_table over a served run's samples, a few steps at a time."""
    parts = numbers.per_step(RANK_READS, lambda rows: rank_table(rows, value))
    # ranks in order, as one table of the whole run has them (a chunk may lack one)
    return pd.concat(parts, axis=1).sort_index() if len(parts) > 1 else parts[0]


def quality_of(numbers: Numbers, metrics: pd.DataFrame | None = None) -> pd.DataFrame:
    """quality over a served run's samples, a few steps at a time."""
    return stacked(numbers.per_step(QUALITY_READS, lambda rows: quality(rows, metrics)))
