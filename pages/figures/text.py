"""Pure text helpers for showing model text literally (never as HTML)."""
from __future__ import annotations

import re


def strip_system(prompt: str, marker: str) -> str:
    """The prompt after the last system-prompt marker (unchanged when there is none)."""
    if not marker or marker not in prompt:
        return prompt
    return prompt.rsplit(marker, 1)[1].lstrip("\n")


def strip_pad(text: str, pad: str) -> str:
    """Text without any occurrence of the pad token."""
    return text.replace(pad, "") if pad else text


def plot_text(text: object) -> str:
    """Text that a Plotly title, label, hover or annotation shows as written.

    Plotly's pseudo-HTML decodes only a few named entities (amp, lt, gt, nbsp, ...), not
    `&quot;`, so html.escape's quote escaping would show literally: escape just & < >."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def visible_token(token: str) -> str:
    """A token with its whitespace made visible: space as ·, tab as →, newline as ↵."""
    return token.replace(" ", "·").replace("\t", "→").replace("\r", "␍").replace("\n", "↵")


_MARKDOWN_SPECIAL = re.compile(r"[\\`*_{}\[\]()<>#+\-.!|~$:&=\"'@%^/;]")


def literal(text: str) -> str:
    """Text that Streamlit's Markdown (messages, captions, radio labels) shows as written.

    Every ASCII punctuation character that Markdown, GFM autolinks or KaTeX could act on
    becomes a numeric character reference: CommonMark shows those as the character itself
    and never as syntax, and unlike a backslash escape it also keeps `http://` and `www.`
    from being linked.  Newlines become hard breaks.  So a file, dir or metric name like
    `![x](http://host/x.png)` is shown, never fetched or linked.
    """
    escaped = _MARKDOWN_SPECIAL.sub(lambda m: f"&#{ord(m.group())};", text)
    return escaped.replace("\r", "").replace("\n", "  \n")
