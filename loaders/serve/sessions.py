"""AReaL's session traces joined to the samples of their task: a request's timing, where the
rollout dump itself has none (loaders.formats.agent_logs.areal_sessions).

A task's samples (a GRPO group) are its sessions: each sample gets its task's timing, the
first submit and the last finalisation, and the mean of its sessions' durations.
"""
from __future__ import annotations

from pathlib import Path

import orjson
import pandas as pd

from loaders import schema as S

SESSIONS = "areal_sessions"  # the format name of a session trace file
TASK = "task_id"
MAX_SESSION_BYTES = 256 << 20  # a trace file read for a view: past this, its start only
RENAMES = {"submit_ts": S.START_TS, "finalized_ts": S.FINISH_TS, "total_s": S.REQUEST_S,
           "generate_s": S.GENERATE_S, "toolcall_s": S.TOOL_S, "reward_s": "reward_s"}


def session_table(root: Path, files: list[str]) -> pd.DataFrame:
    """Per task_id: its sessions' timing under schema.LATENCY_COLUMNS' names."""
    records = []
    for rel in files:
        try:
            with open(root / rel, "rb") as handle:
                data = handle.read(MAX_SESSION_BYTES)
        except OSError:
            continue
        for line in data.splitlines():
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue  # a half-written last line, or a bad one: the rest still count
            if isinstance(record, dict) and isinstance(record.get(TASK), int):
                records.append({TASK: record[TASK], **{new: record.get(old) for old, new
                                                       in RENAMES.items()}})
    if not records:
        return pd.DataFrame(columns=list(RENAMES.values())).rename_axis(TASK)
    frame = pd.DataFrame(records).apply(pd.to_numeric, errors="coerce")
    by = frame.groupby(TASK)
    out = by.mean()
    out[S.START_TS], out[S.FINISH_TS] = by[S.START_TS].min(), by[S.FINISH_TS].max()
    return out


def with_sessions(rows: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """rows with their task's session timing, where they have none of their own."""
    if table.empty or TASK not in rows or S.REQUEST_S in rows:
        return rows
    timing = table[[c for c in table.columns if c not in rows.columns]]
    return rows.join(timing, on=TASK)  # columns the rows have are theirs, not the trace's


def session_files(formats: dict[str, str]) -> list[str]:
    return [rel for rel, fmt in formats.items() if fmt == SESSIONS]
