"""Optional decoding of token ids (prime-rl, NeMo-RL) with a local Hugging Face tokenizer.

`transformers` is an optional extra: nothing here is imported unless the user points the board
at a tokenizer dir, and nothing is ever downloaded (local_files_only).
"""
from __future__ import annotations

from functools import lru_cache


class TokenizerUnavailable(Exception):
    """The tokenizer cannot be used; the message says why, in one line."""


@lru_cache(maxsize=2)
def _load(directory: str) -> object:
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise TokenizerUnavailable(
            "decoding token ids needs the optional 'transformers' package "
            "(pip install transformers)") from None
    try:
        return AutoTokenizer.from_pretrained(directory, local_files_only=True)
    except (OSError, ValueError) as err:
        raise TokenizerUnavailable(f"cannot load a tokenizer from {directory}: {err}") from None


def decode_ids(tokens: list[str], directory: str) -> list[str]:
    """Token texts for tokens that are ids ("1234"); other tokens are returned unchanged."""
    if not all(t.isdigit() for t in tokens):
        return tokens
    tokenizer = _load(directory)
    return [tokenizer.decode([int(t)]) for t in tokens]
