"""A word-level diff of two answers, bounded so a pair of 32k-token answers stays readable.

Words are compared as tokens of text split at whitespace (the whitespace is kept with the
word before it, so the answers come back exactly).  Long unchanged runs are folded to
"… N words …" and the number of changed segments shown is capped; the HTML is escaped, so
model text is never markup.
"""
from __future__ import annotations

import html
import re
from difflib import SequenceMatcher
from typing import NamedTuple

CONTEXT_WORDS = 12  # unchanged words kept on each side of a change
MAX_SEGMENTS = 400  # changed segments shown; the rest are counted
# words compared per answer: difflib is quadratic on repetitive text (~1 s at 6,000 words)
MAX_WORDS = 5000
_WORDS = re.compile(r"\S+\s*|\s+")


class Segment(NamedTuple):
    op: str  # "same", "removed", "added" or "folded"
    text: str


def words(text: str) -> list[str]:
    """text as words with their trailing whitespace; "".join(words(t)) == t."""
    return _WORDS.findall(text)


def word_diff(old: str, new: str, context: int = CONTEXT_WORDS,
              max_words: int = MAX_WORDS) -> list[Segment]:
    """Segments turning old into new (their first max_words words each, the rest folded);
    unchanged runs longer than 2·context are folded."""
    a, b = words(old), words(new)
    rest = max(len(a), len(b)) - max_words
    a, b = a[:max_words], b[:max_words]
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    out: list[Segment] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out.extend(_folded(a[i1:i2], context, first=not out, last=i2 == len(a)))
            continue
        if i2 > i1:
            out.append(Segment("removed", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(Segment("added", "".join(b[j1:j2])))
    if rest > 0:
        out.append(Segment("folded", f" … the last {rest} words are not compared …"))
    return out


def _folded(run: list[str], context: int, first: bool, last: bool) -> list[Segment]:
    head = 0 if first else context
    tail = 0 if last else context
    if len(run) <= head + tail + 1:
        return [Segment("same", "".join(run))]
    parts = [Segment("same", "".join(run[:head]))] if head else []
    parts.append(Segment("folded", f" … {len(run) - head - tail} words … "))
    if tail:
        parts.append(Segment("same", "".join(run[-tail:])))
    return parts


def changed_share(segments: list[Segment]) -> tuple[int, int]:
    """(words removed, words added)."""
    removed = sum(len(words(s.text)) for s in segments if s.op == "removed")
    added = sum(len(words(s.text)) for s in segments if s.op == "added")
    return removed, added


def diff_html(segments: list[Segment], limit: int = MAX_SEGMENTS) -> str:
    """Escaped HTML: removed words struck through in red, added in green, folds grey."""
    styles = {"removed": "background:#fdd;text-decoration:line-through",
              "added": "background:#dfd", "folded": "color:#888;font-style:italic"}
    parts, changes = [], 0
    for segment in segments:
        if segment.op in ("removed", "added"):
            changes += 1
            if changes > limit:
                break
        text = html.escape(segment.text)
        parts.append(f'<span style="{styles[segment.op]}">{text}</span>'
                     if segment.op in styles else text)
    hidden = sum(1 for s in segments if s.op in ("removed", "added")) - min(changes, limit)
    if hidden > 0:
        parts.append(f'<p style="color:#888">… {hidden} more changes not shown</p>')
    body = "".join(parts) or '<span style="color:#888">(both answers are empty)</span>'
    return f'<div style="white-space:pre-wrap;font-family:monospace;font-size:0.85em">{body}</div>'
