"""Token texts as a reader wants them: byte-level and SentencePiece pieces decoded, and
whitespace made visible.

Trainers often dump `convert_ids_to_tokens`, whose pieces are not text: GPT-2-style
byte-level BPE (Qwen, Llama 3, DeepSeek) writes a space as `Ġ` and a newline as `Ċ`, and
SentencePiece (Llama 2, Mistral) writes a space as `▁` and a newline as `<0x0A>`.  A
sample is read in one style, judged from its tokens, so a real `Ġ` in plain text stays.
"""
from __future__ import annotations

from functools import lru_cache

from pages.figures.text import visible_token

PLAIN, BYTE_LEVEL, SENTENCEPIECE = "plain", "byte-level", "sentencepiece"
IDS = "token ids"  # NeMo-RL, slime, prime-rl without a tokenizer: shown as they are, set apart
_PROBE = 4096  # tokens looked at to judge the style


def _byte_alphabet() -> dict[str, int]:
    """GPT-2's bytes_to_unicode, inverted: the character that stands for each byte."""
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    chars, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            chars[chr(byte)] = byte
        else:
            chars[chr(256 + extra)] = byte
            extra += 1
    return chars


_BYTES = _byte_alphabet()


def token_style(tokens: list[str]) -> str:
    """How this sample's tokens are written: plain text, byte-level, SentencePiece or ids."""
    if ids_only(tokens):
        return IDS
    probe = "\0".join(t for t in tokens[:_PROBE] if isinstance(t, str))
    if " " in probe or "\n" in probe:
        return PLAIN
    if "Ġ" in probe or "Ċ" in probe:
        return BYTE_LEVEL
    if "▁" in probe:
        return SENTENCEPIECE
    return PLAIN


def ids_only(tokens: list[str]) -> bool:
    """Whether the token texts are token ids (NeMo-RL, slime, prime-rl without a tokenizer):
    every probed token a run of digits."""
    probe = [t for t in tokens[:_PROBE] if isinstance(t, str)]
    return bool(probe) and all(t.isascii() and t.isdigit() for t in probe)


@lru_cache(maxsize=1 << 16)
def decoded(token: str, style: str) -> str:
    """The text a piece stands for (a byte-level piece that is part of a UTF-8 character
    shows its bytes as \\xNN)."""
    if style == BYTE_LEVEL and all(c in _BYTES for c in token):
        return bytes(_BYTES[c] for c in token).decode("utf-8", errors="backslashreplace")
    if style == SENTENCEPIECE:
        if token.startswith("<0x") and token.endswith(">") and len(token) == 6:
            try:
                return bytes([int(token[3:5], 16)]).decode("utf-8", errors="backslashreplace")
            except ValueError:
                return token
        return token.replace("▁", " ")
    return token


def shown_token(token: str, style: str = PLAIN) -> str:
    """Decoded, with space as ·, tab as →, newline as ↵ (never empty-looking), and cut to
    TOKEN_CHARS (bounded())."""
    return bounded(visible_token(decoded(str(token), style)))


TOKEN_CHARS = 160  # a token's characters shown: a real piece is a few; a dump's one of 60,000
# made the window 14,000 px tall


def bounded(piece: str, most: int = TOKEN_CHARS) -> str:
    """A token's text, its middle left out past `most` characters, with their count."""
    if len(piece) <= most:
        return piece
    left = len(piece) - most
    return f"{piece[:most - 40]}⋯ {left:,} chars ⋯{piece[-40:]}"


TEXT_HEAD, TEXT_TAIL = 4000, 4000  # characters of a long text shown at each end


def clipped(text: str, head: int = TEXT_HEAD, tail: int = TEXT_TAIL) -> str:
    """A long text's start and end (a reasoning response's answer is at its end), with the
    count of the characters between; a 32k-token text in one code block freezes the page."""
    if len(text) <= head + tail + 200:
        return text
    left = len(text) - head - tail
    return (f"{text[:head]}\n\n⋯ {left:,} characters not shown here: the token window below "
            f"pages through all of the response ⋯\n\n{text[-tail:]}")
