"""Pure text helpers for showing model text literally (never as HTML)."""
from __future__ import annotations

import re


def counted(n: int, noun: str) -> str:
    """"1 sample", "2 samples": a count and its noun, plural but for one."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def strip_system(prompt: str, marker: str) -> str:
    """The prompt after the last system-prompt marker (unchanged when there is none)."""
    if not marker or marker not in prompt:
        return prompt
    return prompt.rsplit(marker, 1)[1].lstrip("\n")


def strip_pad(text: str, pad: str) -> str:
    """Text without any occurrence of the pad token."""
    return text.replace(pad, "") if pad else text


def visible_token(token: str) -> str:
    """A token with its whitespace made visible: space as ·, tab as →, newline as ↵ (and
    its controls, as visible_controls writes them)."""
    return visible_controls(
        token.replace(" ", "·").replace("\t", "→").replace("\r", "␍").replace("\n", "↵"))


# bidi embeddings, overrides and isolates, and the C0/C1 controls but tab, newline and CR:
# shown as they are, the first reorder the text around them ("Trojan Source": a name reads
# backwards) and the others show as nothing or as a box, so what is read is not what is there
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def visible_controls(text: str) -> str:
    """The text with each such control written as ⟨U+XXXX⟩, the rest as it is (the marks
    RLM and LRM, which Arabic and Hebrew text holds, only nudge the order, and stay)."""
    return _CONTROLS.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", text)


# a whitespace-free word GFM would autolink: a scheme (http://, mailto:, xmpp:), www., or
# an e-mail address (an @ before a dotted name: pass@1 is not one)
_LINKABLE = re.compile(r"(\S*(?:://|www\.|mailto:|xmpp:)\S*|\S*@[\w-]+\.\w\S*)",
                       re.IGNORECASE)
_MARKDOWN_SPECIAL = re.compile(r"[\\`*_{}\[\]()<>#+\-.!|~$:&=\"'@%^/;]")


def literal(text: str) -> str:
    """Text that Streamlit's Markdown (messages, captions, radio labels) shows as written.

    Every ASCII punctuation character that Markdown or KaTeX could act on becomes a numeric
    character reference: CommonMark shows those as the character itself and never as
    syntax.  GFM's autolinks act on the decoded text, so a word one would link (a URL, www.,
    an e-mail address) is inline code instead.  Newlines become hard breaks.  So a file, dir
    or metric name like `![x](http://host/x.png)` is shown, never fetched or linked.
    """
    parts = _LINKABLE.split(visible_controls(text))  # the odd ones: what GFM would link
    shown = [_code_span(part) if i % 2 else
             _MARKDOWN_SPECIAL.sub(lambda m: f"&#{ord(m.group())};", part)
             for i, part in enumerate(parts)]
    return "".join(shown).replace("\r", "").replace("\n", "  \n")


def _code_span(token: str) -> str:
    """token as inline code: shown as written, and never linked (GFM autolinks the text a
    character reference decodes to, but not code).  The fence is longer than any run of
    backticks in it, and a space each side keeps a backtick at either end apart."""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", token)), default=0) + 1)
    return f"{fence} {token} {fence}"
