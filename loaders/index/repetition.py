"""How repetitive a response is: the share of its word 4-grams that repeat an earlier one.

A generation caught in a loop ("the answer is 4. the answer is 4. …") repeats most of its
4-grams; prose repeats almost none.  Only the response's last REPETITION_CHARS characters
are read: a loop runs on to the end of the response, and the cost stays bounded (about
30 µs a response) however long it is.
"""
from __future__ import annotations

import numpy as np

from loaders import schema as S
from loaders.index import kernel

GRAM = 4
MIN_WORDS = 16  # fewer words say too little: their score is 0


def repetition(text: str) -> float:
    """1 − distinct 4-grams / 4-grams over the text's tail, in [0, 1)."""
    words = text[-S.REPETITION_CHARS:].split()
    if len(words) < MIN_WORDS:
        return 0.0
    grams = len(words) - GRAM + 1
    distinct = len(set(zip(words, words[1:], words[2:], words[3:], strict=False)))
    return 1.0 - distinct / grams


# MIN_WORDS words need at least this many characters (one each, a space between)
_MIN_CHARS = 2 * MIN_WORDS - 1


def repetitions(texts: list[str]) -> np.ndarray:
    """repetition() of every text; a text too short to hold MIN_WORDS words is 0 unread."""
    fast = kernel.repetitions(texts, S.REPETITION_CHARS, MIN_WORDS, _MIN_CHARS)
    if fast is not None:
        return fast
    return np.array([repetition(t) if len(t) >= _MIN_CHARS else 0.0 for t in texts],
                    dtype=np.float64)
