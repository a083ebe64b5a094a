"""Which group a sample belongs to, and whether the trainer left it out, at index time.

Both are summary columns, so the Groups and Prompts pages never parse a line to get them.
"""
from __future__ import annotations

import numpy as np

from loaders import schema as S
from loaders.index.extras import FieldProblem
from loaders.parse.arrays import BadField
from loaders.parse.fields import flag
from loaders.parse.text import text_id, text_of

# padding that some writers leave around a prompt: the same prompt padded to two batch
# widths is still one prompt (the board's default pad token first)
PAD_TOKENS = ("<PAD>", "<pad>", "[PAD]", "<|pad|>", "<|endoftext|>", "<|finetune_right_pad_id|>")


_PAD_STARTS = frozenset(pad[0] for pad in PAD_TOKENS)
_PAD_ENDS = frozenset(pad[-1] for pad in PAD_TOKENS)
PAD_EDGES = ("".join(sorted(_PAD_STARTS)), "".join(sorted(_PAD_ENDS)))  # unpadded's, for C


def unpadded(prompt: str) -> str:
    """The prompt without leading or trailing runs of pad tokens and whitespace."""
    if prompt and prompt[0] not in _PAD_STARTS and prompt[-1] not in _PAD_ENDS and not (
            prompt[0].isspace() or prompt[-1].isspace()):
        return prompt  # the usual case: nothing to strip
    start, end = 0, len(prompt)
    moved = True
    while moved:
        moved = False
        while start < end and prompt[start].isspace():
            start, moved = start + 1, True
        while end > start and prompt[end - 1].isspace():
            end, moved = end - 1, True
        for pad in PAD_TOKENS:
            while prompt.startswith(pad, start, end):
                start, moved = start + len(pad), True
            while end - len(pad) >= start and prompt.endswith(pad, start, end):
                end, moved = end - len(pad), True
    return prompt[start:end]


def prompt_id(prompt: str) -> int:
    """The id of a prompt text: equal prompts match across steps and runs, padding aside."""
    return text_id(unpadded(prompt))


def usable_group_id(value: object) -> bool:
    """A trainer's group id can be any value but a missing one, "", a list or a dict (or
    an array: a list read back from a Parquet dump)."""
    return value is not None and not isinstance(value, (list, dict, np.ndarray)) and (
        value != "")


def group_id(key: str, value: object) -> int:
    """The group id of a trainer's id under `key` (the first of schema.GROUP_KEYS a sample
    has, usable_group_id; without one, its prompt id is its group).  Hashed with its key, so
    `uid` 7 and `group_index` 7 never meet."""
    return text_id(f"{key}\0{text_of(value)}")


def exclusion(obj: dict, problem: FieldProblem) -> str:
    """Why the trainer did not train on this sample ("" when it did): a status such as
    aborted or filtered, a true filtered/aborted flag, an error, or a zero loss weight."""
    for key in S.STATUS_KEYS:
        status = obj.get(key)
        if isinstance(status, str) and status.strip().lower() in S.EXCLUDED_STATUSES:
            return f"{key}={status.strip().lower()}"
    for key in S.FILTER_FLAG_KEYS:
        if obj.get(key) is not None and _true(obj[key], key, problem):
            return key
    for key in S.LOSS_WEIGHT_KEYS:
        if _zero(obj.get(key)):
            return f"{key}=0"
    for key in S.ERROR_KEYS:
        if obj.get(key) not in (None, "", [], {}, False):
            return key
    return ""


def _true(value: object, key: str, problem: FieldProblem) -> bool:
    try:
        return flag(value)
    except BadField as err:
        problem(f"{key}: {err}")
        return False


def _zero(value: object) -> bool:
    """A loss weight of 0 (a number, or a per-token list of zeros)."""
    if isinstance(value, list):
        return bool(value) and all(v == 0 for v in value if not isinstance(v, bool))
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0
