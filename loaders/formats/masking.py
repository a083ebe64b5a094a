"""Selecting the response tokens of a padded or full-sequence record by its mask."""
from __future__ import annotations


def masked(values: object, mask: list, offset: int = 0) -> object:
    """The items of `values` where mask[i - offset] is truthy; non-lists pass through."""
    if not isinstance(values, list) or not isinstance(mask, list):
        return values
    return [v for i, v in enumerate(values) if 0 <= i - offset < len(mask) and mask[i - offset]]
