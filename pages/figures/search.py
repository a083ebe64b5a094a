"""A user's regex search over sample texts, bounded in time and run without the GIL.

Python's `re` backtracks without limit and holds the GIL while it does: `(\\w+\\s?)+$` on a
34-character word froze every session and the health check for minutes.  The `regex`
package (a superset of `re`'s syntax, so every pattern that worked still does) takes a
timeout and, with concurrent=True, releases the GIL while it matches, so the server's other
threads go on.  One search gets limits.SEARCH_SECONDS over all the texts it looks at; past
that it stops with SearchTooSlow, which the page shows like an invalid pattern.
"""
from __future__ import annotations

import html
import time
from collections.abc import Iterable
from itertools import islice

import numpy as np
import regex

from loaders import limits


class SearchTooSlow(ValueError):
    """A search that ran out of its time; the message says so and what to try."""

    def __init__(self, pattern: str, seconds: float) -> None:
        super().__init__(f"search stopped after {seconds:g} s: the pattern {pattern!r} is too "
                         "slow on these texts (nested repeats such as (a|aa)+ backtrack); "
                         "simplify it")


def compile_search(pattern: str) -> tuple[regex.Pattern | None, str | None]:
    """(compiled case-insensitive regex, None) or (None, error message) for a user pattern."""
    if not pattern:
        return None, None
    try:
        return regex.compile(pattern, regex.IGNORECASE), None
    except regex.error as err:
        return None, f"invalid regex: {err}"


def matching(pattern: regex.Pattern, texts: Iterable[str],
             seconds: float = limits.SEARCH_SECONDS) -> np.ndarray:
    """Whether each text has a match, all within `seconds`; else SearchTooSlow."""
    deadline = time.monotonic() + seconds
    found = []
    for text in texts:
        left = deadline - time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError
            found.append(pattern.search(text, concurrent=True, timeout=left) is not None)
        except TimeoutError:
            raise SearchTooSlow(pattern.pattern, seconds) from None
    return np.array(found, dtype=bool)


def highlight(text: str, pattern: regex.Pattern | None, context: int = 80, limit: int = 5,
              seconds: float = limits.SEARCH_SECONDS) -> str:
    """Escaped HTML of the snippets around the first `limit` matches, matches in <mark> (the
    text's start, unmarked, when finding them takes longer than `seconds`)."""
    if pattern is None:
        return html.escape(text[: 2 * context])
    try:
        found = list(islice(pattern.finditer(text, concurrent=True, timeout=seconds), limit))
    except TimeoutError:
        return html.escape(text[: 2 * context])
    snippets = []
    for match in found:
        start, end = max(0, match.start() - context), min(len(text), match.end() + context)
        snippets.append("…" * (start > 0) + html.escape(text[start:match.start()])
                        + f"<mark>{html.escape(match.group(0))}</mark>"
                        + html.escape(text[match.end():end]) + "…" * (end < len(text)))
    return " ⋯ ".join(snippets)
