"""The columns that place a sample among others, for a batch of samples: its group, whether
the trainer left it out, and whether it is a validation sample.  A key is read for the
whole batch at once; a value of an odd kind is read alone and reports its problem."""
from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from loaders import schema as S
from loaders.formats.context import context_of
from loaders.index import kernel
from loaders.index.extras import Report
from loaders.index.fields import codes_of, column
from loaders.index.grouping import exclusion, group_id, usable_group_id
from loaders.parse.arrays import BadField
from loaders.parse.fields import flag


def validation(objs: list[dict], files: Sequence[str], keys: set[str],
               report: Report) -> np.ndarray:
    """A validation sample: its file is named so, or its line says `validation` strictly."""
    by_file = _validation_files(files)
    if S.VALIDATION not in keys:
        return by_file
    said = np.array([_flag(v, S.VALIDATION, i, report)
                     for i, v in enumerate(column(objs, S.VALIDATION, keys))], dtype=bool)
    return said | by_file


def groups(objs: list[dict], keys: set[str], prompt_ids: np.ndarray
           ) -> tuple[np.ndarray, list[str]]:
    """(group id, the key it came from) of every sample: the first of schema.GROUP_KEYS it
    has a usable id under (grouping.group_id), else its prompt.  A key at a time, a
    trainer's id hashed once for the samples in a row that share it (a group's)."""
    ids, sources = prompt_ids.copy(), [S.GROUP_BY_PROMPT] * len(objs)
    left = range(len(objs))
    for key in (k for k in S.GROUP_KEYS if k in keys):
        values, still, known = column(objs, key, keys), [], {}
        if len(left) == len(objs) and kernel.all_strings(values) and "" not in values:
            # every sample's id a text (a uid): no loop a sample
            return _text_group_ids(key, values), [key] * len(values)
        for i in left:
            value = values[i]
            if not usable_group_id(value):
                still.append(i)
                continue
            seen = (type(value), value)  # 1, 1.0 and True are one dict key, not one id
            if seen not in known:
                known[seen] = group_id(key, value)
            ids[i], sources[i] = known[seen], key
        left = still
    return ids, sources


def _text_group_ids(key: str, values: list[str]) -> np.ndarray:
    """group_id(key, value) of each text: in C when built, else each distinct one hashed."""
    ids = kernel.text_ids(values, f"{key}\0", lambda text: group_id(key, text))
    if ids is not None:
        return ids
    known = {text: group_id(key, text) for text in set(values)}
    return np.fromiter(map(known.__getitem__, values), np.int64, len(values))


_EXCLUSION_KEYS = frozenset(S.STATUS_KEYS + S.FILTER_FLAG_KEYS + S.LOSS_WEIGHT_KEYS
                            + S.ERROR_KEYS)


def exclusions(objs: list[dict], keys: set[str], report: Report) -> list[str]:
    """Why the trainer left each sample out ("" when it did not): grouping.exclusion."""
    if keys.isdisjoint(_EXCLUSION_KEYS):
        return [""] * len(objs)
    return [exclusion(o, lambda reason, i=i: report(i, reason))
            if not _EXCLUSION_KEYS.isdisjoint(o) else "" for i, o in enumerate(objs)]


def _flag(value: object, key: str, i: int, report: Report) -> bool:
    try:
        return flag(value)
    except BadField as err:
        report(i, f"{key}: {err}")
        return False


def _validation_files(files: Sequence[str]) -> np.ndarray:
    """_validation_file of each sample's file, asked once a file (a batch holds one or a
    few), not once a sample."""
    codes, names = codes_of(files)
    return np.array([_validation_file(name) for name in names], dtype=bool)[codes]


@lru_cache(maxsize=1 << 16)  # one entry a file: a dir of many small files must not thrash it
def _validation_file(rel: str) -> bool:
    return context_of(rel, -1).validation
