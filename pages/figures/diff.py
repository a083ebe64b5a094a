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
# words compared a side in one changed block: difflib is quadratic on repetitive text
# (~0.35 s for one 3,000-word line repeating itself; tens of ms for real answers)
MAX_WORDS = 3000
_WORDS = re.compile(r"\S+\s*|\s+")


class Segment(NamedTuple):
    op: str  # "same", "removed", "added" or "folded"
    text: str


def words(text: str) -> list[str]:
    """text as words with their trailing whitespace; "".join(words(t)) == t."""
    return _WORDS.findall(text)


def word_diff(old: str, new: str, context: int = CONTEXT_WORDS,
              max_words: int = MAX_WORDS) -> list[Segment]:
    """Segments turning old into new; unchanged runs longer than 2·context are folded.

    Lines are matched first and words only inside the lines that changed, as git's word
    diff does: difflib is quadratic on repetitive text, and a reasoning trace is hundreds of
    lines.  Each changed block compares at most max_words words a side (the rest folded).
    """
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    out: list[Segment] = []
    opcodes = SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    for op, i1, i2, j1, j2 in opcodes:
        if op == "equal":
            run = words("".join(a[i1:i2]))
            out.extend(_folded(run, context, first=not out, last=i2 == len(a)))
        else:
            out.extend(_words_changed("".join(a[i1:i2]), "".join(b[j1:j2]), context,
                                      max_words))
    return out


def _words_changed(old: str, new: str, context: int, max_words: int) -> list[Segment]:
    a, b = words(old), words(new)
    rest = max(len(a), len(b)) - max_words
    a, b = a[:max_words], b[:max_words]
    out: list[Segment] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.extend(_folded(a[i1:i2], context, first=False, last=False))
            continue
        if i2 > i1:
            out.append(Segment("removed", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(Segment("added", "".join(b[j1:j2])))
    if rest > 0:
        out.append(Segment("folded", f" … {rest} more words of this block not compared … "))
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
