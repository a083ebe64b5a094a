"""Several runs side by side: steps aligned, B − A on common steps, and one prompt across runs.

Runs of an ablation answer the same prompts, but at their own steps, in their own order, on
their own ranks.  A prompt is matched across runs by an id of the dataset every run logged
(schema.MATCH_ID_KEYS), or else by its text (schema.PROMPT_ID: the hash of the full prompt
without padding, computed at index time, so no line is read to match).  Each run's answers to
it at a step are that prompt's group there: its reward mean and pass rate are what compare.
Pure pandas over summary frames; each run's per-step prompt summary is kept with the run.
"""
from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.groups.table import DEFAULT_PASS, passed
from loaders.index.extras import extra_column
from loaders.index.numbers import stacked
from loaders.index.steps import _wins as wins  # the Rewards page's win rate, ties excluded
from loaders.metrics.collect import TIME, load_metrics
from loaders.serve.memo import Memo
from loaders.serve.run import Run

AUTO, BY_ID, BY_TEXT = "auto", "id", "text"
MEAN, PASS = S.stat(S.REWARD, "mean"), S.PASS_RATE
_MEMOS: weakref.WeakKeyDictionary[Run, Memo] = weakref.WeakKeyDictionary()
_MEMOS_LOCK = threading.Lock()


def nearest_step(steps: Sequence[int], wanted: int) -> int | None:
    """The step of `steps` closest to wanted (the earlier one on a tie); None when empty."""
    if not len(steps):
        return None
    values = np.asarray(steps)
    return int(values[np.argmin(np.abs(values - wanted) * 2 + (values > wanted))])


_ID_COLUMNS = tuple(extra_column(key) for key in S.MATCH_ID_KEYS)
CURVE_COLUMNS = (S.REWARD, S.REF_REWARD, *map(S.kl_mean, S.KL_ESTIMATORS), S.RESPONSE_LEN)


def _memo(run: Run) -> Memo:
    with _MEMOS_LOCK:
        return _MEMOS.setdefault(run, Memo(size=64))


def curve_stats(run: Run) -> pd.DataFrame:
    """Per step: sample count, mean and std of the compared columns (CURVE_COLUMNS) and the
    win rate, as Run.step_stats names them; without its quantiles (most of its cost), so
    four big runs open in well under a second.  Kept with the run."""
    return run.derived_table("curve_stats", lambda: stacked(
        run.numbers.per_step((S.STEP, *CURVE_COLUMNS), _curve_stats)))


def _curve_stats(samples: pd.DataFrame) -> pd.DataFrame:
    grouped = samples.groupby(S.STEP, sort=True)
    parts = {S.SAMPLES: grouped.size()}
    for column in CURVE_COLUMNS:
        if column in samples:
            parts[S.stat(column, "mean")] = grouped[column].mean()
            parts[S.stat(column, "std")] = grouped[column].std(ddof=0)
    parts[S.WIN_RATE] = wins(samples)[S.WIN_RATE]
    frame = pd.DataFrame(parts)
    frame.index.name = S.STEP
    return frame


def metric_frame(run: Run, metrics_path: str | None = None) -> pd.DataFrame:
    """The run's training metrics by step (the run dir's metric files only, so no alerts are
    computed and nothing is walked; with metrics_path, its health's); kept with the run."""
    if metrics_path:
        return run.health(metrics_path).metrics.frame
    return _memo(run).get("metrics", lambda: load_metrics(files=run.metric_files).frame)


def wall_times(run: Run, metrics_path: str | None = None) -> pd.Series | None:
    """Wall-clock seconds by step, from the run's training metrics when they log a time."""
    frame = metric_frame(run, metrics_path)
    return frame[TIME] if TIME in frame and frame[TIME].notna().any() else None


_WARMED: weakref.WeakSet[Run] = weakref.WeakSet()


def warm_health(runs: Sequence[Run], metrics_path: str | None = None) -> None:
    """Compute each run's health (metrics, signals, alerts) and its sample-offset map in a
    background thread, once per run: the comparison's metrics and alerts view, and the first
    prompt opened, then do not wait for four runs' worth of either."""
    with _MEMOS_LOCK:
        todo = [run for run in runs if run not in _WARMED]
        _WARMED.update(todo)
    if todo:
        threading.Thread(target=_warm, args=(todo, metrics_path), daemon=True,
                         name="rl-board warm health").start()


def _warm(runs: list[Run], metrics_path: str | None) -> None:
    for run in runs:
        run.health(metrics_path)
        if run.size:  # the key -> place lookup, built on a run's first text read
            run.texts(run.step_rows(run.steps[0]).head(1)[S.KEY].tolist())


def id_column(runs: Sequence[Run]) -> str | None:
    """The first dataset id column (schema.MATCH_ID_KEYS) every run has values of."""
    having = [_memo(run).get("ids", lambda run=run: _id_columns(run)) for run in runs]
    return next((c for c in _ID_COLUMNS if all(c in columns for columns in having)), None)


def _id_columns(run: Run) -> frozenset[str]:
    """The id columns run has a value of (read once: a column at a time)."""
    return frozenset(column for column in _ID_COLUMNS if column in run.column_names
                     and run.columns([column])[column].notna().any())


def match_column(runs: Sequence[Run], how: str = AUTO) -> tuple[str, str]:
    """(column to match prompts on, what it is for the page): a shared id column for "id"
    (and for "auto" when there is one), else the prompt text's hash."""
    column = id_column(runs) if how in (AUTO, BY_ID) else None
    if column is not None:
        return column, f"the id `{column}` every run logged"
    why = " (not every run logged one id key)" if how == BY_ID else ""
    return S.PROMPT_ID, f"the prompt text, padding and outer whitespace aside{why}"


def _keys(rows: pd.DataFrame, column: str) -> pd.Series:
    """Match keys as text: 7, 7.0 and " 7" are one id."""
    values = rows[column]
    if pd.api.types.is_numeric_dtype(values):
        number = values.astype("float64")
        whole = np.isfinite(number) & (number == np.round(number))
        text = number.astype("string")
        text[whole] = number[whole].astype("int64").astype("string")
        return text
    return values.astype("string").str.strip()


def prompt_summary(run: Run, step: int, column: str,
                   threshold: float = DEFAULT_PASS) -> pd.DataFrame:
    """One row per matched prompt of run's samples at step, indexed by MATCH_KEY: sample
    count, reward mean, pass rate (loaders.groups.table.passed) and a prompt preview.
    Kept with the run."""
    return _memo(run).get((step, column, threshold),
                    lambda: _summary(run.step_rows(step), column, threshold))


def _summary(rows: pd.DataFrame, column: str, threshold: float) -> pd.DataFrame:
    rows = rows[rows[column].notna()] if column in rows else rows.iloc[:0]
    passes, _ = passed(rows, threshold)
    work = pd.DataFrame({S.MATCH_KEY: _keys(rows, column), S.REWARD: rows[S.REWARD],
                         PASS: passes.astype(np.float64), S.PROMPT: rows[S.PROMPT]})
    by = work.groupby(S.MATCH_KEY, sort=False)
    return pd.DataFrame({S.SAMPLES: by.size(), MEAN: by[S.REWARD].mean(),
                         PASS: by[PASS].mean(), S.PROMPT: by[S.PROMPT].first()})


def matched_prompts(summaries: Sequence[pd.DataFrame], a: int, b: int) -> pd.DataFrame:
    """Every prompt any run has, indexed by MATCH_KEY: each run's samples, reward mean and
    pass rate (run_column(…, i); NaN where run i lacks it), B − A of both, and RUNS_WITH."""
    parts = [s[[S.SAMPLES, MEAN, PASS]].rename(columns=lambda c, i=i: S.run_column(c, i))
             for i, s in enumerate(summaries)]
    table = pd.concat(parts, axis=1, join="outer", sort=False) if parts else pd.DataFrame()
    prompts = pd.concat([s[S.PROMPT] for s in summaries]) if summaries else pd.Series()
    table.insert(0, S.PROMPT, prompts[~prompts.index.duplicated()].reindex(table.index))
    counts = [table[S.run_column(S.SAMPLES, i)].fillna(0) for i in range(len(summaries))]
    for i, count in enumerate(counts):
        table[S.run_column(S.SAMPLES, i)] = count.astype("int64")
    table[S.run_column(MEAN, S.DELTA)] = (table[S.run_column(MEAN, b)]
                                          - table[S.run_column(MEAN, a)])
    table[S.run_column(PASS, S.DELTA)] = (table[S.run_column(PASS, b)]
                                          - table[S.run_column(PASS, a)])
    table[S.RUNS_WITH] = sum((c > 0).astype("int64") for c in counts) if counts else 0
    table.index.name = S.MATCH_KEY
    return table


def step_difference(a: pd.DataFrame, b: pd.DataFrame, column: str) -> pd.DataFrame:
    """On the steps (index) both frames have a value of column: A, B and B − A."""
    left = a[column] if column in a else pd.Series(dtype="float64")
    right = b[column] if column in b else pd.Series(dtype="float64")
    both = pd.concat({"a": left.astype("float64"), "b": right.astype("float64")}, axis=1,
                     join="inner").dropna()
    both[S.DELTA] = both["b"] - both["a"]
    both.index.name = S.STEP
    return both


def answers(run: Run, step: int, column: str, key: str) -> pd.DataFrame:
    """The run's samples at step whose match key is `key`, best reward first."""
    rows = run.step_rows(step)
    if column not in rows:
        return rows.iloc[:0]
    rows = rows[rows[column].notna()]
    return rows[_keys(rows, column).to_numpy() == key].sort_values(
        S.REWARD, ascending=False, na_position="last")
