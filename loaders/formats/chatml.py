"""Turns of a conversation decoded with its chat-template tokens kept (ChatML).

AReaL and SkyRL decode prompt and response with the special tokens kept, so a Qwen-style
text reads `<|im_start|>role\\ncontent<|im_end|>` per message.  Tool results come back as
`user` messages wrapped in `<tool_response>` (Qwen's template for the `tool` role); they
are tool turns here, one per block.  Assistant turns read their Hermes `<tool_call>` blocks
as tool calls (loaders.formats.verl_turns).
"""
from __future__ import annotations

import re

from loaders.formats.verl_turns import assistant_turn

_BLOCK = re.compile(r"<\|im_start\|>([A-Za-z_]+)\n?(.*?)(?:<\|im_end\|>|(?=<\|im_start\|>)|\Z)",
                    re.DOTALL)
_TOOL_RESPONSE = re.compile(r"<tool_response>\n?(.*?)\n?</tool_response>", re.DOTALL)
_PADDING = ("<|endoftext|>", "<|im_end|>")


def _strip(text: str) -> str:
    for pad in _PADDING:
        while text.endswith(pad):
            text = text[: -len(pad)]
    return text.strip("\n")


def chatml_turns(text: str) -> list[dict]:
    """The messages of a ChatML text ([] when it has no <|im_start|> block)."""
    turns = []
    for role, body in _BLOCK.findall(text):
        body = _strip(body)
        responses = _TOOL_RESPONSE.findall(body) if role in ("user", "tool") else []
        if responses and not _TOOL_RESPONSE.sub("", body).strip():
            turns += [{"role": "tool", "content": r} for r in responses]
        elif role == "assistant":
            turns.append(assistant_turn(body))
        else:
            turns.append({"role": role, "content": body})
    return turns
