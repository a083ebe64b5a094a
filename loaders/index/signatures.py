"""Each response's near-duplicate signature: locality-sensitive bands of its min-hashes.

A response's shingles are its word 3-grams over its first and last WINDOW characters (a
template shows at both ends; the cost stays bounded at 32k tokens), its words read with
ASCII letters lowercased and each run of digits as one "0", so a paraphrase with other
numbers is the same text.  BANDS x ROWS min-hashes (a multiply-add each over the shingles'
hashes) make BANDS bands of ROWS: two responses that share a band are near duplicates
(Jaccard similarity about 0.8 and up shares one almost surely, 0.5 almost never).  The bands
are index columns (schema.SIGNATURES, two bands an int64), so a step's clusters are made from
the index alone (loaders.groups.clusters).  kernel.c computes them; the Python here gives
the same numbers, bit for bit, where it is not built.
"""
from __future__ import annotations

import numpy as np

from loaders.index import kernel

BANDS, ROWS = 8, 8
WINDOW = 1500
_M = (1 << 64) - 1


def signatures(texts: list[str]) -> np.ndarray:
    """(len(texts), BANDS) uint32: each text's bands; an empty text's are 0."""
    fast = kernel.signatures(texts, WINDOW, BANDS, ROWS)
    if fast is not None:
        return fast.reshape(len(texts), BANDS)
    out = np.zeros((len(texts), BANDS), dtype=np.uint32)
    for i, text in enumerate(texts):
        out[i] = _bands(str(text))
    return out


def _mix(h: int) -> int:  # splitmix64's finalizer, as kernel.c's mix()
    h ^= h >> 30
    h = (h * 0xBF58476D1CE4E5B9) & _M
    h ^= h >> 27
    h = (h * 0x94D049BB133111EB) & _M
    return h ^ (h >> 31)


_M32 = (1 << 32) - 1
_MULTIPLIERS = [(_mix(2 * k + 1) & _M32) | 1 for k in range(BANDS * ROWS)]
_ADDENDS = [_mix(2 * k + 2) & _M32 for k in range(BANDS * ROWS)]


def _shingle(w: list[int]) -> int:
    h = _mix(w[0] ^ _mix(w[1] ^ _mix(w[2])))
    return (h >> 32) ^ (h & _M32)


def _word(word: str) -> int:
    h, digits = 0xCBF29CE484222325, False
    for ch in word:
        if "0" <= ch <= "9":
            if digits:
                continue
            digits, ch = True, "0"
        else:
            digits = False
            if "A" <= ch <= "Z":
                ch = ch.lower()
        h = ((h ^ ord(ch)) * 0x100000001B3) & _M
    return _mix(h)


def _bands(text: str) -> list[int]:
    parts = [text] if len(text) < 2 * WINDOW else [text[:WINDOW], text[-WINDOW:]]
    w, words, grams = [0, 0, 0], 0, []
    for part in parts:
        for word in part.split():
            w = [w[1], w[2], _word(word)]
            words += 1
            if words >= 3:
                grams.append(_shingle(w))
    if 0 < words < 3:
        grams = [_shingle(w)]
    if not grams:
        return [0] * BANDS
    mins = [min((g * a + b) & _M32 for g in grams) for a, b in zip(_MULTIPLIERS, _ADDENDS)]
    out = []
    for band in range(BANDS):  # a multiply-add chain, one mix at the end
        h = 0
        for row in range(ROWS):
            h = (h * 0x9E3779B97F4A7C15 + mins[band * ROWS + row]) & _M
        out.append(_mix(h) >> 32)
    return out
