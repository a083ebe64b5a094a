"""What an object from an untrusted file will cost once the board writes it out, measured
before it does (see loaders/limits.py).

An unpickled object can share parts: one list referenced ten times by a list referenced ten
times (a "billion laughs"), one tensor by every sample.  Normalising and indexing the samples
writes each reference out in full, so a shared part is counted each time it appears; it is
measured once (by id), so the walk costs one step per distinct container.  The walk keeps its
own stack: a 100,000-deep object is refused at MAX_DEPTH, never a RecursionError.
"""
from __future__ import annotations

import numpy as np

from loaders import limits
from loaders.limits import OverBudget

_CONTAINERS = (list, tuple, dict, set, frozenset)
_SCALARS = frozenset({int, float, bool, complex, type(None)})
_SCALARS_AND_TEXT = _SCALARS | {str}


def check_payload(root: object) -> object:
    """root itself, once its depth, values and text are within budget; else OverBudget."""
    values, chars = _measure(root)
    if values > limits.MAX_VALUES:
        raise OverBudget("values", values, limits.MAX_VALUES)
    if chars > limits.MAX_TEXT_CHARS:
        raise OverBudget("text characters", chars, limits.MAX_TEXT_CHARS)
    return root


def _measure(root: object) -> tuple[int, int]:
    """(values, characters) root makes written out, shared parts counted each time."""
    if not isinstance(root, _CONTAINERS):
        return _leaf(root)
    sizes: dict[int, tuple[int, int]] = {}
    stack: list[tuple[object, int, tuple | None]] = [(root, 1, None)]
    while stack:
        item, depth, entered = stack.pop()
        if entered is not None:  # leaving: its container children are measured
            values, chars, kids = entered
            for kid in kids:
                values, chars = values + sizes[id(kid)][0], chars + sizes[id(kid)][1]
            if values > limits.MAX_VALUES or chars > limits.MAX_TEXT_CHARS:
                return values, chars  # no need to finish: it is over already
            sizes[id(item)] = (values, chars)
        elif id(item) not in sizes:
            if depth > limits.MAX_DEPTH:
                raise OverBudget("nesting depth", depth, limits.MAX_DEPTH)
            own = _own(item)
            stack.append((item, depth, own))
            stack.extend((kid, depth + 1, None) for kid in own[2])
    return sizes[id(root)]


def _own(item: object) -> tuple[int, int, list]:
    """(values, characters) of a container's direct leaves, and its container children.  A
    list of numbers or of texts (token ids, token texts) is measured at C speed."""
    elements = [*item.keys(), *item.values()] if isinstance(item, dict) else item
    kinds = set(map(type, elements))
    if kinds <= _SCALARS:
        return len(elements) + 1, 0, []
    if kinds <= _SCALARS_AND_TEXT:
        return len(elements) + 1, sum(len(e) for e in elements if e.__class__ is str), []
    values, chars, kids = 1, 0, []
    for element in elements:
        if isinstance(element, _CONTAINERS):
            kids.append(element)
        else:
            size = _leaf(element)
            values, chars = values + size[0], chars + size[1]
    return values, chars, kids


def _leaf(item: object) -> tuple[int, int]:
    if isinstance(item, (str, bytes, bytearray)):
        return 1, len(item)
    if isinstance(item, np.ndarray):
        return max(item.size, 1), 0
    if hasattr(item, "pil_state"):  # a pickled image's pixels count as its text would
        return 1, len(item.data)
    return 1, 0
