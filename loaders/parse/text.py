"""Turning whatever a trainer wrote in a text field into a display string."""
from __future__ import annotations

import hashlib

import orjson


def text_of(value: object) -> str:
    """A string for a text field: chat message lists become '[role] content' lines."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(
            isinstance(m, dict) and "content" in m for m in value):
        return "\n".join(f"[{m.get('role', '?')}] {text_of(m['content'])}" for m in value)
    try:
        return orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY).decode()
    except TypeError:
        return str(value)


def text_id(text: str) -> int:
    """A stable signed 64-bit id of a text, so equal prompts match across steps and runs."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)
