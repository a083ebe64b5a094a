"""Parsed samples -> summary columns (one value per sample, no token arrays).

Samples are summarized a few hundred at a time, as columns: each field is read for the
whole batch in one list comprehension, and every per-token statistic (lengths, the four KL
estimators, NaN counts, the token digest) is numpy over the batch's tokens laid end to end.
Only what is odd in one sample (a value of the wrong type, a conversation, a loss mask)
is read for that sample alone.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from itertools import chain

import numpy as np

from loaders import schema as S
from loaders.index import field_columns as F
from loaders.index.extras import FieldProblem, extra_column, extra_columns
from loaders.index.text_columns import text_columns
from loaders.index.token_digest import TokenDigest
from loaders.parse import conversation, kl, trained_tokens
from loaders.parse.arrays import BadField, float_array
from loaders.parse.fields import finite_sum, scalar

__all__ = ["SummaryBatch", "extra_column", "finite_sum", "scalar"]
FLUSH = 256  # samples summarized together: enough to amortize numpy, few enough to stay small


class SummaryBatch:
    """Collects samples; summarizes them FLUSH at a time into columns."""

    def __init__(self) -> None:
        self._objs: list[dict] = []
        self._where: list[dict] = []
        self._problems: list[FieldProblem | list] = []
        self._after: dict[int, list[Callable[[], None]]] = {}  # by pending sample
        self._parts: list[dict[str, list | np.ndarray]] = []
        self._done = 0  # samples summarized
        self._policy: list[np.ndarray] = []  # logprobs of the samples with KL, end to end
        self._reference: list[np.ndarray] = []
        self._order: list[tuple[int, int]] = []  # (row, n) of each of them
        self._digest = TokenDigest()
        self._prompt_ids: dict[str, int] = {}

    def __len__(self) -> int:
        return self._done + len(self._objs)

    def add(self, obj: dict, where: dict, problem: FieldProblem | list) -> None:
        """One sample, where it was found (file, line, …) and where its problems go: a
        callable given each reason, or a chunk's problem list, given (line, reason, False)
        (no closure a sample)."""
        self._objs.append(obj)
        self._where.append(where)
        self._problems.append(problem)
        if len(self._objs) >= FLUSH:
            self._flush()

    def after(self, then: Callable[[], None]) -> None:
        """Run `then` once the last sample added has had its problems reported (now, when
        it has), so a line's problems keep their order."""
        if self._objs:
            self._after.setdefault(len(self._objs) - 1, []).append(then)
        else:
            then()

    def _flush(self) -> None:
        objs, wheres, problems, after = self._objs, self._where, self._problems, self._after
        self._objs, self._where, self._problems, self._after = [], [], [], {}
        if not objs:
            return
        found: list[tuple[int, str]] = []

        def report(i: int, reason: str) -> None:
            found.append((i, reason))

        part = _summarize(objs, wheres, report, self._prompt_ids)
        self._log_ratios(objs, part[S.RESPONSE_LEN].tolist(), report)
        _report(found, problems, wheres, after)
        self._digest.add(objs, self._done, part[S.RESPONSE_LEN], part.pop(_PLACES))
        self._parts.append(part)
        self._done += len(objs)

    def _log_ratios(self, objs: list[dict], lengths: list[int], report: F.Report) -> None:
        """The policy and reference logprobs of every sample that has both, end to end."""
        both = [i for i, (o, n) in enumerate(zip(objs, lengths)) if n and o.get(
            S.LOGPROBS) is not None and o.get(S.REF_LOGPROBS) is not None]
        if not both:
            return
        pair = _flat(objs, both, lengths, S.LOGPROBS), _flat(objs, both, lengths, S.REF_LOGPROBS)
        if pair[0] is None or pair[1] is None:  # something odd in a list: sample by sample
            both = [i for i in both if self._one_ratio(objs[i], lengths[i], i, report)]
        else:
            self._policy.append(pair[0])
            self._reference.append(pair[1])
        self._order.extend((self._done + i, lengths[i]) for i in both)

    def _one_ratio(self, obj: dict, n: int, i: int, report: F.Report) -> bool:
        try:
            pair = float_array(_head(obj[S.LOGPROBS], n)), float_array(_head(
                obj[S.REF_LOGPROBS], n))
        except BadField as err:
            report(i, f"logprobs/ref_logprobs: {err}")
            return False
        self._policy.append(pair[0])
        self._reference.append(pair[1])
        return True

    def finish(self) -> dict[str, list | np.ndarray]:
        """Every column, with log_ratio and KL filled in (NaN where not computable)."""
        self._flush()
        cols = _concat(self._parts)
        if not cols:
            return {}
        rows = len(cols[S.STEP])
        for name in _KL_COLUMNS:
            cols[name] = np.full(rows, math.nan)
        policy = np.concatenate(self._policy) if self._policy else np.zeros(0)
        reference = np.concatenate(self._reference) if self._reference else np.zeros(0)
        if self._order:
            _fill_kl(cols, policy, reference, self._order)
        cols[S.TOKEN_DIGEST] = self._digest.attach(cols, policy, reference, self._order)
        return cols


_PLACES = "\0places"  # a part's trained-token places, handed to the digest


def _report(found: list[tuple[int, str]], problems: list[FieldProblem | list],
            wheres: list[dict], after: dict[int, list[Callable[[], None]]]) -> None:
    """Each sample's problems in field order, then what was to follow them, by sample."""
    by_sample: dict[int, list[str]] = {}
    for i, reason in found:
        by_sample.setdefault(i, []).append(reason)
    for i in sorted(by_sample.keys() | after.keys()):
        sink = problems[i]
        for reason in by_sample.get(i, ()):
            if sink.__class__ is list:
                sink.append((wheres[i].get(S.LINE, 0), reason, False))
            else:
                sink(reason)
        for then in after.get(i, ()):
            then()


def _head(values: object, n: int) -> object:
    """The first n items of a list or array (anything else as it is, for float_array to
    name)."""
    return values[:n] if isinstance(values, (list, np.ndarray)) and len(values) != n else values


def _flat(objs: list[dict], rows: list[int], lengths: list[int], key: str) -> np.ndarray | None:
    """The key's first n numbers of every sample in rows, end to end; None when one of them
    is not a plain list of numbers."""
    parts = [objs[i][key] for i in rows]
    if set(map(type, parts)) == {np.ndarray}:  # a Parquet dump's: already numbers
        return F.numeric_heads(parts, [lengths[i] for i in rows])
    if set(map(type, parts)) != {list}:
        return None
    heads = [v if len(v) == lengths[i] else v[:lengths[i]] for v, i in zip(parts, rows)]
    try:
        return np.fromiter(chain.from_iterable(heads), np.float64,
                           sum(lengths[i] for i in rows))
    except (TypeError, ValueError, OverflowError):
        return None


def _summarize(objs: list[dict], wheres: list[dict], report: F.Report,
               prompt_ids: dict[str, int]) -> dict:
    """The summary columns of one batch of samples (KL and digest aside)."""
    cols: dict = {key: [w.get(key) for w in wheres] for key in dict.fromkeys(
        k for w in wheres[:1] for k in w)}
    keys = set().union(*objs)
    turns = _conversations(objs, keys)
    places = _trained_views(objs, keys, cols)
    keys = set().union(*objs)
    cols[S.STEP] = np.array([o[S.STEP] for o in objs], dtype=np.int64)
    cols[S.VALIDATION] = F.validation(objs, cols.get(S.FILE) or [""] * len(objs), keys, report)
    cols[S.RESPONSE_LEN], cols[S.LENGTH_MISMATCH] = F.aligned(objs, keys)
    bad = F.scalars(objs, keys, cols, report) + F.critic(objs, keys, cols[S.RESPONSE_LEN],
                                                          cols, report)
    text_columns(objs, keys, cols, prompt_ids)
    cols[S.GROUP_ID], cols[S.GROUP_SOURCE] = F.groups(objs, keys, cols[S.PROMPT_ID])
    cols[S.EXCLUDED_BY] = F.exclusions(objs, keys, report)
    cols[S.EXCLUDED] = np.array([bool(e) for e in cols[S.EXCLUDED_BY]], dtype=bool)
    cols.update(extra_columns(objs, keys, report))
    cols.update(_conversation_columns(objs, keys, turns, cols[S.TRAINED_SHARE]))
    cols[S.NAN_COUNT] = bad
    cols[_PLACES] = places
    return cols


def _conversations(objs: list[dict], keys: set[str]) -> list[list] | None:
    """Each sample's turns, when any sample of the batch has a conversation."""
    if S.MESSAGES not in keys:
        return None
    return [conversation.turns_of(o) if S.MESSAGES in o else [] for o in objs]


def _trained_views(objs: list[dict], keys: set[str], cols: dict) -> list:
    """Cut every multi-turn sample to its trained tokens, in place (see trained_tokens);
    the trained share goes to cols, each cut sample's token places are returned."""
    share = np.full(len(objs), math.nan)
    places: list = [None] * len(objs)
    if S.LOSS_MASK in keys:
        for i, obj in enumerate(objs):
            if S.LOSS_MASK in obj:
                objs[i], share[i], places[i] = trained_tokens.trained_view(obj)
    cols[S.TRAINED_SHARE] = share
    return places


def _conversation_columns(objs: list[dict], keys: set[str], turns: list[list] | None,
                          share: np.ndarray) -> dict[str, list | np.ndarray]:
    """schema.CONVERSATION_COLUMNS of every sample (NaN and "" for single-turn ones)."""
    if turns is not None and any(turns):
        rows = [conversation.columns(o, t, float(s)) for o, t, s in zip(objs, turns, share)]
        return {name: [row[name] for row in rows] for name in S.CONVERSATION_COLUMNS
                if name != S.TRAINED_SHARE}
    nan = np.full(len(objs), math.nan)
    finish = [""] * len(objs)
    if "finish_reason" in keys or "stop_reason" in keys:
        finish = [conversation.last_finish([], o) for o in objs]
    return {S.TURNS: nan, S.TOOL_CALLS: nan.copy(), S.TOOL_NAMES: [""] * len(objs),
            S.TOOL_ERRORS: nan.copy(), S.LAST_FINISH: finish}


def _concat(parts: list[dict]) -> dict[str, list | np.ndarray]:
    """The batch's parts as one set of columns (None where a part lacks a column)."""
    names = dict.fromkeys(name for part in parts for name in part)
    out: dict[str, list | np.ndarray] = {}
    for name in names:
        pieces = [part.get(name) for part in parts]
        sizes = [len(part[S.STEP]) for part in parts]
        if all(isinstance(p, np.ndarray) for p in pieces):
            out[name] = np.concatenate(pieces)
        else:
            out[name] = [v for p, size in zip(pieces, sizes)
                         for v in (([None] * size) if p is None else p)]
    return out


def _fill_kl(cols: dict, policy: np.ndarray, reference: np.ndarray,
             order: list[tuple[int, int]]) -> None:
    rows = np.array([row for row, _ in order], dtype=np.int64)
    lengths = np.array([n for _, n in order], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    sums = kl.segment_sums(policy - reference, starts)
    bad = np.add.reduceat((~np.isfinite(policy)) + (~np.isfinite(reference)).astype(np.int64),
                          starts)
    finite = sums["finite"]
    with np.errstate(invalid="ignore", divide="ignore"):
        for name in S.KL_ESTIMATORS:
            cols[S.kl_sum(name)][rows] = np.where(finite > 0, sums[name], math.nan)
            cols[S.kl_mean(name)][rows] = sums[name] / finite
    cols[S.LOG_RATIO_SUM] = cols[S.kl_sum(S.K1)].copy()
    cols[S.LOG_RATIO_MEAN] = cols[S.kl_mean(S.K1)].copy()
    cols[S.NAN_COUNT][rows] += bad

_KL_COLUMNS = (S.LOG_RATIO_MEAN, S.LOG_RATIO_SUM, *map(S.kl_mean, S.KL_ESTIMATORS),
               *map(S.kl_sum, S.KL_ESTIMATORS))
