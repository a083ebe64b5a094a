"""A run's GRPO groups as the pages ask for them, each answer computed once and kept."""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.groups import advantage as adv
from loaders.groups.history import HISTORY_COLUMNS, previews, prompt_steps, prompt_table
from loaders.groups.table import (
    CORRECT_COLUMNS,
    DEFAULT_PASS,
    correct_column,
    group_table,
    mix,
    pass_rule,
    passed,
    passes,
)
from loaders.index.extras import extra_column
from loaders.index.numbers import Numbers, stacked
from loaders.serve.memo import Memo

T = TypeVar("T")
# Run.kept_tables: tables made over every sample (`make`), kept by name beside the index
Keep = Callable[[tuple[str, ...], Callable[[], tuple[pd.DataFrame, ...]]],
                tuple[pd.DataFrame, ...]]
ROWS_KEPT = 4  # steps whose rows (with advantages and passes) a Groups keeps
# rows with these READ_BY_ROW columns (Run.with_previews): a whole-run table reads only the
# prompt, and no key
Texts = Callable[..., pd.DataFrame]


@dataclass(frozen=True)
class GroupOptions:
    advantage: str = adv.GRPO  # how to derive advantages when the dump has none
    pass_threshold: float = DEFAULT_PASS
    kl_estimator: str = S.K3
    show_left_out: bool = False  # put left-out samples into the tables (said on the page)


@dataclass(frozen=True)
class StepGroups:
    table: pd.DataFrame  # one row per group, indexed by group id
    mix: dict[str, int]
    advantage_source: str
    pass_rule: str
    left_out_samples: int  # at this step, whether shown or not
    left_out_groups: int  # groups of this step with no trained sample at all


class Groups:
    """Group tables, members and prompt history of one run's samples (trained ones, plus
    the left-out ones when asked), read a step (or the columns a whole-run table needs) at
    a time.  `group_key` names a column to group by instead of the indexed group id (the
    board's --group-key)."""

    def __init__(self, samples: Numbers, left_out: Numbers | None,
                 group_key: str | None = None,
                 texts: Texts = lambda rows, *columns, **keys: rows,
                 keep: Keep = lambda names, make: make()) -> None:
        self.numbers, self.left_out, self.group_key = samples, left_out, group_key
        self._texts = texts  # rows with their text previews (Run.with_previews)
        self._keep = keep  # tables made over every sample, kept (Run.kept_tables)
        self._memo: Memo[tuple, object] = Memo(size=64)  # small tables and facts
        # a step's rows with their previews are ~2 KB a sample (16 MB at 8,192 a step):
        # the few last asked for, not 64 of them
        self._step_frames: Memo[tuple, pd.DataFrame] = Memo(size=ROWS_KEPT)
        self._trained: Memo[int, pd.DataFrame] = Memo(size=ROWS_KEPT)  # read once a step

    def trained_rows(self, step: int) -> pd.DataFrame:
        """One step's trained samples, their group ids as grouped."""
        return self._trained.get(step, lambda: with_group_key(self.numbers.step(step),
                                                              self.group_key))

    def _left_out_rows(self, step: int) -> pd.DataFrame:
        """One step's left-out samples (none read when the run has none)."""
        if self.left_out is None:
            return self.trained_rows(step).iloc[:0]
        return with_group_key(self.left_out.step(step), self.group_key)

    def _per_step(self, names: tuple[str, ...], make: Callable[[pd.DataFrame], T]
                  ) -> list[T]:
        """make() of every sample's columns `names` (and the group key's, its group ids as
        grouped), a few steps at a time."""
        key = extra_column(self.group_key) if self.group_key else None
        return self.numbers.per_step([*names, S.GROUP_SOURCE, *([key] if key else [])],
                                     lambda rows: make(with_group_key(rows, self.group_key)))

    def rows(self, step: int, options: GroupOptions) -> pd.DataFrame:
        """One step's samples with their advantage and pass columns added."""
        return self._step_frames.get((step, options), lambda: self._rows(step, options))

    def _rows(self, step: int, options: GroupOptions) -> pd.DataFrame:
        rows = self.trained_rows(step)
        if options.show_left_out:
            more = self._left_out_rows(step)
            rows = pd.concat([rows, more], ignore_index=True) if len(more) else rows
        rows = self._texts(rows).copy()
        rows[S.ADVANTAGE] = adv.advantages(rows, [rows[S.GROUP_ID]], options.advantage)
        rows[S.PASSED], _ = passed(rows, options.pass_threshold)
        return rows

    def step(self, step: int, options: GroupOptions) -> StepGroups:
        return self._memo.get(("step", step, options), lambda: self._step(step, options))

    def _step(self, step: int, options: GroupOptions) -> StepGroups:
        rows = self.rows(step, options)
        outside = self._left_out_rows(step)
        table = group_table(rows, rows[S.ADVANTAGE], rows[S.PASSED],
                            S.kl_mean(options.kl_estimator), outside)
        trained = self.trained_rows(step)[S.GROUP_ID]
        wholly_out = outside.loc[~outside[S.GROUP_ID].isin(trained), S.GROUP_ID].nunique()
        return StepGroups(table, mix(table), self.source(options.advantage),
                          self.rule(options.pass_threshold), len(outside), int(wholly_out))

    def source(self, advantage: str) -> str:
        """Where the run's advantages come from (adv.source over every sample)."""
        return self._memo.get(("source", advantage), lambda: adv.source(
            self.numbers.read(adv.TRAINER_COLUMNS), advantage))

    def rule(self, threshold: float) -> str:
        """What passing means in this run (pass_rule over every sample)."""
        return pass_rule(self._correct_frame(), threshold)

    def _correct_frame(self) -> pd.DataFrame:
        """A row of each correctness column the run has a value of (what correct_column
        looks for over the whole run), read once."""
        def read() -> tuple[pd.DataFrame]:
            frame = self.numbers.read(CORRECT_COLUMNS)
            return (pd.DataFrame({name: frame[name].dropna().head(1).reset_index(drop=True)
                                  for name in frame.columns}),)
        return self._memo.get(("correct",), lambda: self._keep(("correct_values",), read)[0])

    def members(self, step: int, group_id: int, options: GroupOptions) -> pd.DataFrame:
        """Every answer of one group, best reward first."""
        rows = self.rows(step, options)
        return rows[rows[S.GROUP_ID] == group_id].sort_values(
            S.REWARD, ascending=False, kind="stable", na_position="last")

    def history(self, threshold: float = DEFAULT_PASS) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(per prompt and step, per prompt) over the run's trained samples."""
        return self._memo.get(("history", threshold), lambda: self._history(threshold))

    def _history(self, threshold: float) -> tuple[pd.DataFrame, pd.DataFrame]:
        name = f"prompt_history-{_named(threshold, self.group_key)}"
        steps, first = self._keep((f"{name}-steps", f"{name}-first"),
                                  lambda: self._prompt_steps(threshold))
        return steps, prompt_table(steps, previews(self._texts(first, (S.PROMPT,), keys=False)))

    def _prompt_steps(self, threshold: float) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(prompt_steps over the run, each prompt's first row), a few steps at a time."""
        correct = correct_column(self._correct_frame())
        def of(samples: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
            # a prompt's steps, and its first row (whose preview is read) in these steps
            return (prompt_steps(samples, passes(samples, correct, threshold)[0]),
                    samples.drop_duplicates(S.PROMPT_ID)[[S.ROW, S.PROMPT_ID]])
        parts = self._per_step((S.ROW, *HISTORY_COLUMNS, *CORRECT_COLUMNS), of)
        steps = stacked([p[0] for p in parts]).sort_values(
            [S.PROMPT_ID, S.STEP], kind="stable").reset_index(drop=True)
        first = stacked([p[1] for p in parts]).drop_duplicates(S.PROMPT_ID)
        return steps, first.reset_index(drop=True)

    def prompt(self, prompt_id: int, threshold: float = DEFAULT_PASS) -> pd.DataFrame:
        """One prompt's group at every step it appears."""
        steps, _ = self.history(threshold)
        return steps[steps[S.PROMPT_ID] == prompt_id].reset_index(drop=True)


def _named(threshold: float, group_key: str | None) -> str:
    """A file-name-safe name of a history's parameters (a group key is any text)."""
    return hashlib.sha256(repr((threshold, group_key)).encode()).hexdigest()[:16]


def with_group_key(frame: pd.DataFrame, key: str | None) -> pd.DataFrame:
    """frame with GROUP_ID taken from the column of `key` when one was named and exists
    (rows without a value keep their indexed id)."""
    column = extra_column(key) if key else None
    if column is None or column not in frame.columns:
        return frame
    values = frame[column]
    hashed = pd.util.hash_pandas_object(values.astype("string"), index=False)
    ids = hashed.to_numpy().view(np.int64)
    out = frame.copy()
    out[S.GROUP_ID] = np.where(values.notna(), ids, frame[S.GROUP_ID].to_numpy())
    out[S.GROUP_SOURCE] = np.where(values.notna(), key, frame[S.GROUP_SOURCE].astype(str))
    return out
