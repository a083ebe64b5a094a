"""Multi-turn (agentic) samples: their conversation, and which response tokens are trained.

A sample may carry `messages` (schema.MESSAGES), an ordered list of turns in the OpenAI chat
layout most trainers write: `{role, content, tool_calls, tool_call_id, name,
reasoning_content, finish_reason}`, where a tool call is `{id, name, arguments}` or
`{id, type: "function", function: {name, arguments}}` and content is a string or a list of
`{type: "text", text}` parts.  Over its response tokens, `loss_mask` marks the trained
(model-sampled) tokens and `token_turns` the turn each token belongs to.

Masked tokens (tool outputs, user turns, template scaffold) are the environment's: see
loaders.parse.trained_tokens.
"""
from __future__ import annotations

import json
import math
import re
from typing import TypedDict

from loaders import schema as S
from loaders.parse.text import text_of

ROLES = ("system", "user", "assistant", "tool")
# how a tool output says it failed, when the trainer does not flag it: its first words
_TOOL_ERROR = re.compile(r"^\s*(\[?error\b|traceback \(most recent call last\)|exception\b|"
                         r"failed\b|command failed|timed? ?out\b)", re.IGNORECASE)
_ERROR_FLAGS = ("is_error", "error")
MAX_TOOL_NAMES = 200  # characters of the tool_names column


class ToolCall(TypedDict):
    id: str
    name: str
    arguments: str  # as the model wrote them
    pretty: str  # indented JSON when they parse as a JSON object or list, else ""


class Turn(TypedDict):
    role: str  # one of ROLES, else "other"
    raw_role: str  # as written (shown when it is not one of ROLES)
    text: str
    reasoning: str
    tool_calls: list[ToolCall]
    tool_call_id: str
    name: str
    finish_reason: str
    error: bool  # a tool turn that reports a failure
    seconds: float | None  # its wall time: the model's for an assistant turn, else the tool's


def _content(value: object) -> str:
    if isinstance(value, list) and all(isinstance(p, dict) for p in value):
        parts = [p.get("text") if isinstance(p.get("text"), str) else text_of(p) for p in value]
        return "".join(parts)
    return text_of(value)


def pretty(arguments: str) -> str:
    """Arguments as indented JSON when they are a JSON object or list, else ""."""
    try:
        value = json.loads(arguments)
    except (ValueError, TypeError, RecursionError):
        return ""
    if not isinstance(value, (dict, list)):
        return ""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        return ""


def _call(raw: object, pretty_args: bool) -> ToolCall:
    if not isinstance(raw, dict):
        return ToolCall(id="", name="", arguments=text_of(raw), pretty="")
    fn = raw.get("function") if isinstance(raw.get("function"), dict) else raw
    args = fn.get("arguments", fn.get("args", fn.get("input")))
    args = args if isinstance(args, str) else text_of(args)
    return ToolCall(id=text_of(raw.get("id")), name=text_of(fn.get("name")), arguments=args,
                    pretty=pretty(args) if pretty_args else "")


def _error(message: dict, role: str, text: str) -> bool:
    if role != "tool":
        return False
    for key in _ERROR_FLAGS:
        value = message.get(key)
        if value not in (None, "", False, 0, [], {}):
            return True
    return bool(_TOOL_ERROR.match(text))


def turn_of(message: object, pretty_args: bool = False) -> Turn:
    """One message as a Turn; anything that is not an object is a turn of role "other".
    With pretty_args, tool-call arguments are also indented (for the view, not the index)."""
    if not isinstance(message, dict):
        return Turn(role="other", raw_role="", text=text_of(message), reasoning="",
                    tool_calls=[], tool_call_id="", name="", finish_reason="", error=False,
                    seconds=None)
    raw_role = text_of(message.get("role"))
    role = raw_role.lower() if raw_role.lower() in ROLES else (
        "tool" if raw_role.lower() in ("ipython", "function", "observation", "environment")
        else "other")
    text = _content(message.get("content"))
    calls = message.get("tool_calls")
    return Turn(role=role, raw_role=raw_role, text=text,
                reasoning=text_of(message.get("reasoning_content") or message.get("reasoning")),
                tool_calls=[_call(c, pretty_args) for c in calls] if isinstance(calls, list)
                else [],
                tool_call_id=text_of(message.get("tool_call_id")),
                name=text_of(message.get("name")),
                finish_reason=text_of(message.get("finish_reason")),
                error=_error(message, role, text), seconds=_seconds(message.get("seconds")))


def _seconds(value: object) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
    return float(value) if ok and math.isfinite(value) else None


def turns_of(obj: dict, pretty_args: bool = False) -> list[Turn]:
    """The sample's conversation as turns ([] for a single-turn sample)."""
    messages = obj.get(S.MESSAGES)
    return [turn_of(m, pretty_args) for m in messages] if isinstance(messages, list) else []


def last_finish(turns: list[Turn], obj: dict) -> str:
    for turn in reversed(turns):
        if turn["role"] == "assistant":
            if turn["finish_reason"]:
                return turn["finish_reason"]
            break
    for key in ("finish_reason", "stop_reason"):
        if isinstance(obj.get(key), str):
            return obj[key]
    return ""


def columns(obj: dict, turns: list[Turn], trained_share: float) -> dict[str, object]:
    """The conversation's summary columns (schema.CONVERSATION_COLUMNS)."""
    if not turns:
        return {S.TURNS: math.nan, S.TOOL_CALLS: math.nan, S.TOOL_NAMES: "",
                S.TOOL_ERRORS: math.nan, S.TRAINED_SHARE: trained_share,
                S.LAST_FINISH: last_finish(turns, obj)}
    calls = [c for t in turns if t["role"] == "assistant" for c in t["tool_calls"]]
    names = ", ".join(sorted({c["name"] for c in calls if c["name"]}))
    return {S.TURNS: float(len(turns)), S.TOOL_CALLS: float(len(calls)),
            S.TOOL_NAMES: names[:MAX_TOOL_NAMES],
            S.TOOL_ERRORS: float(sum(t["error"] for t in turns)),
            S.TRAINED_SHARE: trained_share, S.LAST_FINISH: last_finish(turns, obj)}


def fill_texts(sample: dict) -> dict:
    """A conversation without prompt/response keys gets them: the turns before the first
    assistant turn are the prompt, the rest the response (as '[role] text' lines)."""
    messages = sample.get(S.MESSAGES)
    if not isinstance(messages, list) or (S.PROMPT in sample and S.RESPONSE in sample):
        return sample
    first = next((i for i, m in enumerate(messages)
                  if isinstance(m, dict) and m.get("role") == "assistant"), len(messages))
    sample.setdefault(S.PROMPT, flat_text(messages[:first]))
    sample.setdefault(S.RESPONSE, flat_text(messages[first:]))
    return sample


def flat_text(messages: list) -> str:
    """Messages as '[role] text' lines, tool calls as 'name(arguments)'."""
    lines = []
    for turn in map(turn_of, messages):
        calls = " ".join(f"{c['name']}({c['arguments']})" for c in turn["tool_calls"])
        lines.append(f"[{turn['raw_role'] or turn['role']}] {turn['text']}"
                     + (f" {calls}" if calls else ""))
    return "\n".join(lines)
