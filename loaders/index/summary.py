"""Parsed samples -> summary columns (one value per sample, no token arrays).

Samples are summarized up to FLUSH at a time, as columns: each field is read for the
whole batch in one list comprehension, and every per-token statistic (lengths, the four KL
estimators, NaN counts, the token digest) is numpy over the batch's tokens laid end to end.
Only what is odd in one sample (a value of the wrong type, a conversation, a loss mask)
is read for that sample alone.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from loaders import schema as S
from loaders.index import field_columns as F
from loaders.index import group_columns as G
from loaders.index import kernel
from loaders.index import turn_columns as T
from loaders.index.block_fields import BlockFields
from loaders.index.extras import FieldProblem, extra_column, extra_columns
from loaders.index.fields import Fields, column, joined
from loaders.index.kl_columns import LogRatios
from loaders.index.lines import AS_DICTS, Block
from loaders.index.text_columns import text_columns
from loaders.index.token_digest import TokenDigest
from loaders.parse.fields import finite_sum, scalar

__all__ = ["SummaryBatch", "extra_column", "finite_sum", "scalar"]
FLUSH = 1024  # samples summarized together: numpy's and a batch's fixed costs amortized
FLUSH_BYTES = 2 << 20  # or fewer, when their lines are long: parsed, they hold 3-5x that


class SummaryBatch:
    """Collects samples; summarizes them FLUSH at a time into columns."""

    def __init__(self) -> None:
        self._objs: list[dict] = []
        self._where: list[tuple] = []  # each sample's WHERE values
        self._problems: list[FieldProblem | list] = []
        self._after: dict[int, list[Callable[[], None]]] = {}  # by pending sample
        self._bytes = 0  # of the pending samples' lines
        self._parts: list[dict[str, list | np.ndarray]] = []
        self._done = 0  # samples summarized
        self._ratios = LogRatios()
        self._digest = TokenDigest()

    def __len__(self) -> int:
        return self._done + len(self._objs)

    def add(self, obj: dict, where: dict | tuple, problem: FieldProblem | list) -> None:
        """One sample, where it was found (WHERE's columns: a dict, or their values in that
        order) and where its problems go: a callable given each reason, or a chunk's problem
        list, given (line, reason, False) (no closure a sample)."""
        self._objs.append(obj)
        if where.__class__ is not tuple:
            where = where_of(**{_ARGS[key]: value for key, value in where.items()})
        self._where.append(where)
        self._problems.append(problem)
        self._bytes += where[4]
        if len(self._objs) >= FLUSH or self._bytes >= FLUSH_BYTES:
            self._flush()

    def add_block(self, block: Block, where: dict[str, list | np.ndarray],
                  problems: list) -> None:
        """A run of plain lines read as columns (loaders.index.lines), with its WHERE
        columns; its problems go to the chunk's list.  The samples before it are summarized
        first: the parts keep the samples' order."""
        self._flush()
        keys = BlockFields(block)
        if not AS_DICTS.isdisjoint(keys):  # a per-sample rule: read as the dicts it holds,
            for i, row in enumerate(keys.rows()):  # a FLUSH of them at a time (a block is a
                self.add(dict(row), tuple(where[k][i] for k in WHERE), problems)  # chunk)
            return
        self._summarized(keys.rows(), where, [problems] * len(block), {}, keys)

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
        self._bytes = 0
        if objs:
            self._summarized(objs, _where_columns(wheres), problems, after)

    def _summarized(self, objs: list[dict], where: dict, problems: list,
                    after: dict[int, list[Callable[[], None]]], keys: Fields | None = None
                    ) -> None:
        """One part: the samples' columns, their KL and digest, their problems reported."""
        found: list[tuple[int, str]] = []

        def report(i: int, reason: str) -> None:
            found.append((i, reason))

        part = _summarize(objs, where, report, keys)
        keys = part.pop(_FIELDS)
        self._ratios.add(objs, self._done, part[S.RESPONSE_LEN].tolist(), report, keys)
        _report(found, problems, where[S.LINE], after)
        self._digest.add(objs, self._done, part[S.RESPONSE_LEN], part.pop(_PLACES), keys)
        self._parts.append(part)
        self._done += len(objs)

    def finish(self) -> dict[str, list | np.ndarray]:
        """Every column, with log_ratio and KL filled in (NaN where not computable)."""
        self._flush()
        cols = _concat(self._parts)
        if not cols:
            return {}
        policy, reference = self._ratios.arrays()
        self._ratios.fill(cols, policy, reference)
        cols[S.TOKEN_DIGEST] = self._digest.attach(cols, policy, reference, self._ratios.order)
        return cols


WHERE = (S.FILE, S.LINE, S.RANK, S.OFFSET, S.NBYTES, S.LINE_CHECK, S.ITEM)
_ARGS = {S.FILE: "file", S.LINE: "line", S.RANK: "rank", S.OFFSET: "offset",
         S.NBYTES: "nbytes", S.LINE_CHECK: "check", S.ITEM: "item"}


def where_of(file: str, line: int, rank: int, offset: int, nbytes: int = 0,
             check: int | None = None, item: int = 0) -> tuple:
    """Where a sample was found, as SummaryBatch.add takes it (schema names in WHERE)."""
    return file, line, rank, offset, nbytes, check, item


_PLACES = "\0places"  # a part's trained-token places, handed to the digest
_FIELDS = "\0fields"  # and its keys with their columns (fields.Fields)


def _report(found: list[tuple[int, str]], problems: list[FieldProblem | list],
            lines: Sequence[int], after: dict[int, list[Callable[[], None]]]) -> None:
    """Each sample's problems in field order, then what was to follow them, by sample."""
    by_sample: dict[int, list[str]] = {}
    for i, reason in found:
        by_sample.setdefault(i, []).append(reason)
    for i in sorted(by_sample.keys() | after.keys()):
        sink = problems[i]
        for reason in by_sample.get(i, ()):
            if sink.__class__ is list:
                sink.append((int(lines[i]), reason, False))
            else:
                sink(reason)
        for then in after.get(i, ()):
            then()


def _where_columns(wheres: list[tuple]) -> dict:
    """WHERE's columns of samples added one at a time."""
    cols: dict = dict(zip(WHERE, map(list, zip(*wheres))))
    for key in WHERE[1:]:  # numbers as numpy: no Python int to convert later
        if None not in cols[key]:
            cols[key] = np.array(cols[key], dtype=np.int64)
    return cols


def _summarize(objs: list[dict], where: dict, report: F.Report, fields: Fields | None = None
               ) -> dict:
    """The summary columns of one batch of samples (KL and digest aside); `fields`: a
    block's columns (no conversation: loaders.index.lines.AS_DICTS)."""
    cols: dict = dict(where)
    keys = set(fields) if fields is not None else set().union(*objs)
    turns = T.conversations(objs, keys)
    places = T.trained_views(objs, keys, cols)  # drops only known keys: `keys` still holds
    keys = fields if fields is not None else Fields(objs, keys)  # after the cut: its
    # columns are the cut samples'
    cols[S.STEP] = kernel.whole_numbers(column(objs, S.STEP, keys))
    cols[S.POLICY_LAG], cols[S.POLICY_SPAN] = F.policy_lag(objs, keys, cols[S.STEP], report)
    cols[S.IMAGES] = F.image_counts(objs, keys)
    cols[S.VALIDATION] = G.validation(objs, cols.get(S.FILE) or [""] * len(objs), keys, report)
    cols[S.RESPONSE_LEN], cols[S.LENGTH_MISMATCH] = F.aligned(objs, keys)
    bad = F.scalars(objs, keys, cols, report) + F.critic(objs, keys, cols[S.RESPONSE_LEN],
                                                          cols, report)
    text_columns(objs, keys, cols)
    cols[S.GROUP_ID], cols[S.GROUP_SOURCE] = G.groups(objs, keys, cols[S.PROMPT_ID])
    cols[S.EXCLUDED_BY] = G.exclusions(objs, keys, report)
    excluded = cols[S.EXCLUDED_BY]  # a batch mostly excludes none: no bool() a sample then
    cols[S.EXCLUDED] = (np.fromiter(map(bool, excluded), bool, len(excluded)) if any(excluded)
                        else np.zeros(len(excluded), dtype=bool))
    cols.update(extra_columns(objs, keys, report))
    cols.update(T.conversation_columns(objs, keys, turns, cols[S.TRAINED_SHARE]))
    cols[S.NAN_COUNT] = bad
    cols[_PLACES] = places
    cols[_FIELDS] = keys
    return cols


def _concat(parts: list[dict]) -> dict[str, list | np.ndarray]:
    """The batch's parts as one set of columns (None where a part lacks a column): the
    schema's in the parts' order, then the extras by name, wherever the batches were cut."""
    names = dict.fromkeys(name for part in parts for name in part)
    names = [n for n in names if n in S.SUMMARY_DTYPES or n.startswith("\0")] + sorted(
        n for n in names if n not in S.SUMMARY_DTYPES and not n.startswith("\0"))
    out: dict[str, list | np.ndarray] = {}
    sizes = [len(part[S.STEP]) for part in parts]
    for name in names:
        pieces = [part.get(name) for part in parts]
        if all(isinstance(p, np.ndarray) for p in pieces):
            out[name] = joined(pieces)
            continue
        if len(pieces) == 1 and isinstance(pieces[0], list):  # one part: its list as it is
            out[name] = pieces[0]
            continue
        listed: list = []  # extend is one copy of a list's pointers; a chain, a call an item
        for piece, size in zip(pieces, sizes):
            listed.extend([None] * size if piece is None else piece)
        out[name] = listed
    return out
