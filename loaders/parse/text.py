"""Turning whatever a trainer wrote in a text field into a display string."""
from __future__ import annotations

import hashlib
import json

import orjson

from loaders.parse.repair import encodable

MAX_CHAT_DEPTH = 4  # chat messages inside message content deeper than this are shown as JSON


def text_of(value: object, _depth: int = 0) -> str:
    """A string for a text field: chat message lists become '[role] content' lines."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if _depth < MAX_CHAT_DEPTH and isinstance(value, list) and value and all(
            isinstance(m, dict) and "content" in m for m in value):
        return "\n".join(f"[{_role(m.get('role', '?'))}] {text_of(m['content'], _depth + 1)}"
                         for m in value)
    try:
        return orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY).decode()
    except TypeError:  # nested past orjson's 255 levels, an int past 64 bits, a surrogate
        return json_text(value)


def _role(role: object) -> str:
    return json_text(role) if isinstance(role, (dict, list, tuple)) else str(role)


class _Piece(str):
    """Text to emit as is, among the values still to render."""


def json_text(value: object) -> str:
    """Compact JSON-like text of value (as orjson writes it) without recursion, so a value
    nested 100,000 levels deep costs memory in proportion, never the stack; always
    encodable as UTF-8."""
    out: list[str] = []
    todo: list[object] = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, _Piece):
            out.append(item)
        elif isinstance(item, (dict, list, tuple)):
            todo.extend(reversed(_parts(item)))
        else:
            out.append(_leaf(item))
    return "".join(out)


def _parts(container: dict | list | tuple) -> list[object]:
    """One container as punctuation pieces and the children still to render, in order."""
    if isinstance(container, dict):
        parts: list[object] = [_Piece("{")]
        for n, (key, child) in enumerate(container.items()):
            parts += [_Piece(("," if n else "") + _leaf(str(key)) + ":"), child]
        return [*parts, _Piece("}")]
    parts = [_Piece("[")]
    for n, child in enumerate(container):
        parts += [_Piece(","), child] if n else [child]
    return [*parts, _Piece("]")]


def _leaf(value: object) -> str:
    if isinstance(value, str):
        return encodable(json.dumps(value, ensure_ascii=False))
    try:
        return orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY).decode()
    except TypeError:  # an int past 64 bits, a type JSON has no name for
        return encodable(str(value))


def text_id(text: str) -> int:
    """A stable signed 64-bit id of a text, so equal prompts match across steps and runs."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)
