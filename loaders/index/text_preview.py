"""A text's preview, as the index keeps it: its length and its head, or "…" and its tail.

Below every column module that cuts texts (text_columns for the prompt and responses,
extras for an extra text such as a `uid`), so each cuts them the one way.
"""
from __future__ import annotations

import numpy as np

from loaders import schema as S
from loaders.index import kernel


def previews(values: list[str], tail: bool) -> tuple[np.ndarray, list[str]]:
    """Each text's length and its preview (schema.PREVIEW_CHARS: its head, or "…" and its
    tail); in one C pass when built."""
    cut = S.PREVIEW_CHARS
    fast = kernel.previews(values, cut, tail)
    if fast is not None:
        return fast
    lengths = np.fromiter(map(len, values), np.int64, len(values))
    if tail:
        return lengths, [t if len(t) <= cut else "…" + t[1 - cut:] for t in values]
    return lengths, [t if len(t) <= cut else t[:cut] for t in values]
