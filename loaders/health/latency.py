"""A step's request latency: how long its samples' requests took and where the time went
(the model, the tools or environment, the queue), the stragglers that held the batch back,
and the share of the step's wall time spent waiting on the last of them.  Read from the
columns schema.LATENCY_COLUMNS names, over one step's rows."""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S

PARTS = (S.GENERATE_S, S.TOOL_S, S.QUEUE_S)  # where a request's time went
STRAGGLER_SHARE = 0.01  # the slowest 1 % of a step's requests...
MIN_STRAGGLERS = 5  # ...and at least this many, so a small step still shows its tail


def latency_columns(rows: pd.DataFrame) -> list[str]:
    """The timing columns the rows have numbers in."""
    return [c for c in S.LATENCY_COLUMNS if c in rows and pd.api.types.is_numeric_dtype(rows[c])
            and rows[c].notna().any()]


def time_of(rows: pd.DataFrame) -> pd.Series | None:
    """Each request's time: its whole wall time, else the sum of the parts it has."""
    if S.REQUEST_S in latency_columns(rows):
        return rows[S.REQUEST_S].astype(float)
    parts = [c for c in PARTS if c in latency_columns(rows)]
    return rows[parts].astype(float).sum(axis=1, min_count=1) if parts else None


def summary(rows: pd.DataFrame) -> dict[str, float]:
    """The step's request time quantiles, each part's mean, and (with start and finish
    times) the share of its wall time spent waiting on its slowest 1 % of requests."""
    taken = time_of(rows)
    if taken is None or taken.notna().sum() == 0:
        return {}
    known = taken.dropna()
    out = {"requests": float(len(known)), **{f"time p{q}": float(known.quantile(q / 100))
                                              for q in (50, 90, 99)},
           "time max": float(known.max())}
    for part in (c for c in PARTS if c in latency_columns(rows)):
        out[f"{part} mean"] = float(rows[part].mean())
    if {S.START_TS, S.FINISH_TS} <= set(latency_columns(rows)):
        start, finish = rows[S.START_TS].dropna(), rows[S.FINISH_TS].dropna()
        wall = finish.max() - start.min()
        if wall > 0:
            out["wall s"] = float(wall)
            out["waiting on the last 1 %"] = float((finish.max() - finish.quantile(0.99)) / wall)
    return out


def stragglers(rows: pd.DataFrame) -> pd.DataFrame:
    """The slowest requests of the step (STRAGGLER_SHARE of them, at least MIN_STRAGGLERS),
    slowest first, with their parts, length and reward."""
    taken = time_of(rows)
    if taken is None:
        return pd.DataFrame()
    count = max(MIN_STRAGGLERS, int(np.ceil(STRAGGLER_SHARE * taken.notna().sum())))
    slow = taken.dropna().nlargest(count).index
    columns = [S.KEY, *[c for c in PARTS if c in latency_columns(rows)], S.RESPONSE_LEN,
               S.REWARD]
    table = rows.loc[slow, [c for c in columns if c in rows]]
    table.insert(1, "time s", taken.loc[slow].to_numpy())
    return table.reset_index(drop=True)


def tokens_vs_time(rows: pd.DataFrame, bins: int = 40) -> tuple[np.ndarray, np.ndarray,
                                                                 np.ndarray] | None:
    """(counts, token edges, time edges): a step's samples binned by response tokens and
    request time, so 8,192 samples draw as bins x bins cells, not one mark each."""
    taken = time_of(rows)
    if taken is None:
        return None
    both = pd.DataFrame({"t": taken, "n": rows[S.RESPONSE_LEN].astype(float)}).dropna()
    if both.empty:
        return None
    counts, n_edges, t_edges = np.histogram2d(both["n"], both["t"], bins=bins)
    return counts, n_edges, t_edges
