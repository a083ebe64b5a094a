"""The conversation columns of a batch (schema.CONVERSATION_COLUMNS), and its multi-turn
samples cut to their trained tokens.  Only a batch that has a conversation or a loss mask
reads any sample one at a time."""
from __future__ import annotations

import math

import numpy as np

from loaders import schema as S
from loaders.parse import conversation, trained_tokens


def conversations(objs: list[dict], keys: set[str]) -> list[list] | None:
    """Each sample's turns, when any sample of the batch has a conversation."""
    if S.MESSAGES not in keys:
        return None
    return [conversation.turns_of(o) if S.MESSAGES in o else [] for o in objs]


def trained_views(objs: list[dict], keys: set[str], cols: dict) -> list:
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


def conversation_columns(objs: list[dict], keys: set[str], turns: list[list] | None,
                         share: np.ndarray) -> dict[str, list | np.ndarray]:
    """schema.CONVERSATION_COLUMNS of every sample but the trained share (NaN and "" for
    single-turn ones)."""
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
