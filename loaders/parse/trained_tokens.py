"""Trained and masked tokens of a multi-turn sample (schema.LOSS_MASK, schema.TOKEN_TURNS).

Masked tokens (tool outputs, user turns, template scaffold) are the environment's: they are
left out of every mean, sum and KL by `trained_view`, which the summary applies before it
computes anything, and `mask_untrained`, which blanks their metrics in a token table.
"""
from __future__ import annotations

import math
from itertools import compress

import numpy as np

from loaders import schema as S


def trained_flags(obj: dict) -> np.ndarray | None:
    """The loss mask as bools, or None when the sample has none (every token trained)."""
    mask = obj.get(S.LOSS_MASK)
    if not isinstance(mask, (list, np.ndarray)) or len(mask) == 0:
        return None
    try:
        arr = np.asarray(mask, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return np.nan_to_num(arr) != 0 if arr.ndim == 1 else None


def trained_view(obj: dict) -> tuple[dict, float, np.ndarray | None]:
    """(the sample with every per-token list cut to its trained tokens, the trained share,
    the trained tokens' places in the whole response, or None when none was cut).

    Lists as long as the loss mask are cut; the mask and turn index go.  Without a mask the
    sample is returned as it is and the share is NaN."""
    flags = trained_flags(obj)
    if flags is None:
        return obj, math.nan, None
    share = float(flags.mean())
    keep, kept = np.flatnonzero(flags), flags.tolist()
    view = {k: v for k, v in obj.items() if k not in (S.LOSS_MASK, S.TOKEN_TURNS)}
    if share == 1.0:
        return view, share, None
    n = len(flags)
    for key, value in view.items():
        if key == S.MESSAGES or not isinstance(value, (list, np.ndarray)) or len(value) != n:
            continue
        view[key] = value[keep] if isinstance(value, np.ndarray) else list(compress(value, kept))
    return view, share, keep


def token_columns(obj: dict, n: int) -> dict[str, np.ndarray]:
    """A token table's turn and trained columns for its first n tokens ({} when the sample
    has neither a loss mask nor a turn index)."""
    if S.LOSS_MASK not in obj and S.TOKEN_TURNS not in obj:
        return {}
    flags = trained_flags(obj)
    trained = np.ones(n, dtype=bool)
    if flags is not None:
        trained[: min(n, len(flags))] = flags[:n]
    turns = np.full(n, -1, dtype=np.int64)
    raw = obj.get(S.TOKEN_TURNS)
    if isinstance(raw, (list, np.ndarray)) and len(raw):
        try:
            arr = np.nan_to_num(np.asarray(raw[:n], dtype=np.float64), nan=-1).astype(np.int64)
            turns[: len(arr)] = arr
        except (TypeError, ValueError, OverflowError):
            pass
    return {S.TURN: turns, S.TRAINED: trained}


def mask_untrained(columns: dict[str, object], trained: np.ndarray) -> None:
    """Blank every float column at the masked tokens, in place: the environment's tokens
    enter no mean, sum, KL, colour scale or top-token list."""
    if trained.all():
        return
    for name, values in columns.items():
        if isinstance(values, np.ndarray) and values.dtype.kind == "f" and len(values) == len(
                trained):
            values = values.copy()
            values[~trained] = np.nan
            columns[name] = values
