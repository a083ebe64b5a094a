"""Parsed samples -> summary rows (one per sample, no token arrays)."""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from loaders import schema as S
from loaders.formats.context import context_of
from loaders.index.extras import FieldProblem, extra_column, extras
from loaders.index.grouping import exclusion, group_of, prompt_id
from loaders.index.repetition import repetition
from loaders.index.token_digest import TokenDigest
from loaders.parse import conversation, kl, trained_tokens
from loaders.parse.arrays import BadField, aligned_length, float_array, pack_floats
from loaders.parse.fields import flag
from loaders.parse.text import text_of

__all__ = ["SummaryBatch", "extra_column", "finite_sum", "scalar"]


def scalar(value: object) -> float:
    """A reward-like scalar as float; missing is NaN.  Raises BadField."""
    if value is None:
        return math.nan
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:
            raise BadField(f"number out of range: {str(value)[:20]}…") from None
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise BadField(f"expected a number, got {str(value)[:40]!r}")


def finite_sum(values: list, n: int) -> tuple[float, int]:
    """(sum over finite values, count of non-finite values) of the first n items."""
    if isinstance(values, np.ndarray):  # a Parquet dump's column: no Python loop
        arr = float_array(values[:n])
        finite = np.isfinite(arr)
        return float(arr[finite].sum()), int(n - finite.sum())
    if not isinstance(values, list):
        raise BadField(f"expected a list of numbers, got {type(values).__name__}")
    part = values if len(values) == n else values[:n]
    try:
        total = sum(part, 0.0)
        if math.isfinite(total):
            return total, 0
    except (TypeError, OverflowError):
        pass
    arr = float_array(part)
    finite = np.isfinite(arr)
    return float(arr[finite].sum()), int(n - finite.sum())


class SummaryBatch:
    """Collects rows; the KL columns are computed for the whole batch in one numpy pass."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self._lp: list[bytes] = []
        self._ref: list[bytes] = []
        self._kl_rows: list[int] = []
        self._lengths: list[int] = []
        self._digest = TokenDigest()

    def add(self, obj: dict, where: dict, problem: FieldProblem) -> None:
        turns = conversation.turns_of(obj)
        obj, trained_share, places = trained_tokens.trained_view(obj)  # masked: in nothing
        row = dict(where)
        row[S.STEP] = obj[S.STEP]
        row[S.VALIDATION] = _validation(obj, where.get(S.FILE, ""), problem)
        n, mismatch = aligned_length(obj)
        row[S.RESPONSE_LEN] = n
        row[S.LENGTH_MISMATCH] = mismatch
        nan_count = self._scalars(obj, row, problem) + self._critic(obj, row, n, problem)
        row[S.NAN_COUNT] = nan_count
        _texts(obj, row)
        row[S.GROUP_ID], row[S.GROUP_SOURCE] = group_of(obj, row[S.PROMPT_ID])
        row[S.EXCLUDED_BY] = exclusion(obj, problem)
        row[S.EXCLUDED] = bool(row[S.EXCLUDED_BY])
        row.update(extras(obj, problem))
        row.update(conversation.columns(obj, turns, trained_share))
        self._log_ratio(obj, row, n, problem)
        self._digest.add(obj, len(self.rows), n, places)
        self.rows.append(row)

    def _scalars(self, obj: dict, row: dict, problem: FieldProblem) -> int:
        for key in S.SCALAR_KEYS:
            try:
                row[key] = scalar(obj.get(key))
            except BadField as err:
                problem(f"{key}: {err}")
                row[key] = math.nan
        row[S.REWARD_GAP] = row[S.REWARD] - row[S.REF_REWARD]
        present = [row[k] for k in S.SCALAR_KEYS if obj.get(k) is not None]
        return sum(1 for v in present if not math.isfinite(v))

    def _critic(self, obj: dict, row: dict, n: int, problem: FieldProblem) -> int:
        bad = 0
        for key, column, as_mean in ((S.VALUES, S.VALUE_MEAN, True),
                                     (S.TOKEN_REWARDS, S.TOKEN_REWARD_SUM, False)):
            values, row[column] = obj.get(key), math.nan
            if values is None or n == 0:
                continue
            try:
                total, nonfinite = finite_sum(values, n)
            except BadField as err:
                problem(f"{key}: {err}")
                continue
            bad += nonfinite
            finite = n - nonfinite
            row[column] = (total / finite if finite else math.nan) if as_mean else total
        return bad

    def _log_ratio(self, obj: dict, row: dict, n: int, problem: FieldProblem) -> None:
        lp, ref = obj.get(S.LOGPROBS), obj.get(S.REF_LOGPROBS)
        if n == 0 or lp is None or ref is None:
            return
        try:
            packed = pack_floats(lp, n), pack_floats(ref, n)
        except BadField as err:
            problem(f"logprobs/ref_logprobs: {err}")
            return
        self._lp.append(packed[0])
        self._ref.append(packed[1])
        self._kl_rows.append(len(self.rows))
        self._lengths.append(n)

    def finish(self) -> list[dict]:
        """The rows, with log_ratio and KL columns filled in (NaN where not computable)."""
        for row in self.rows:
            for name in _KL_COLUMNS:
                row[name] = math.nan
        if self._kl_rows:
            self._fill_kl()
        self._digest.attach(self.rows, self._lp, self._ref, self._kl_rows)
        return self.rows

    def _fill_kl(self) -> None:
        lp = np.frombuffer(b"".join(self._lp), dtype=np.float64)
        ref = np.frombuffer(b"".join(self._ref), dtype=np.float64)
        lengths = np.asarray(self._lengths)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        sums = kl.segment_sums(lp - ref, starts)
        bad = np.add.reduceat((~np.isfinite(lp)) + (~np.isfinite(ref)).astype(np.int64), starts)
        finite = sums["finite"]
        with np.errstate(invalid="ignore", divide="ignore"):
            means = {name: sums[name] / finite for name in S.KL_ESTIMATORS}
        for i, row_index in enumerate(self._kl_rows):
            row = self.rows[row_index]
            for name in S.KL_ESTIMATORS:
                row[S.kl_sum(name)] = float(sums[name][i]) if finite[i] else math.nan
                row[S.kl_mean(name)] = float(means[name][i])
            row[S.LOG_RATIO_SUM] = row[S.kl_sum(S.K1)]
            row[S.LOG_RATIO_MEAN] = row[S.kl_mean(S.K1)]
            row[S.NAN_COUNT] += int(bad[i])


_KL_COLUMNS = (S.LOG_RATIO_MEAN, S.LOG_RATIO_SUM, *map(S.kl_mean, S.KL_ESTIMATORS),
               *map(S.kl_sum, S.KL_ESTIMATORS))


def _texts(obj: dict, row: dict) -> None:
    prompt = text_of(obj.get(S.PROMPT))
    row[S.PROMPT_ID] = prompt_id(prompt)
    # a prompt's question is at its end (after any system prompt), so keep its tail
    row[S.PROMPT] = prompt if len(prompt) <= S.PREVIEW_CHARS else (
        "…" + prompt[1 - S.PREVIEW_CHARS:])
    row[S.PROMPT_CHARS] = len(prompt)
    for key, chars in ((S.RESPONSE, S.RESPONSE_CHARS), (S.REF_RESPONSE, S.REF_RESPONSE_CHARS),
                       (S.GROUND_TRUTH, None)):
        text = text_of(obj.get(key))
        row[key] = text[: S.PREVIEW_CHARS]
        if chars:
            row[chars] = len(text)
        if key == S.RESPONSE:
            row[S.REPETITION] = repetition(text)


@lru_cache(maxsize=1 << 16)  # one entry a file: a dir of many small files must not thrash it
def _validation_file(rel: str) -> bool:
    return context_of(rel, -1).validation


def _validation(obj: dict, rel: str, problem: FieldProblem) -> bool:
    """A validation sample: its file is named so, or its line says `validation` strictly."""
    try:
        line = flag(obj.get(S.VALIDATION))
    except BadField as err:
        problem(f"{S.VALIDATION}: {err}")
        line = False
    return line or _validation_file(rel)
