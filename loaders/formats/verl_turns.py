"""Turns of a verl multi-turn (tool agent loop) sample, rebuilt from its decoded texts.

verl's rollout and validation dumps (verl/trainer/ppo/ray_trainer.py `_dump_generations`)
hold `input` and `output` decoded with skip_special_tokens=True, and nothing of the turns.
In the tool agent loop (verl/experimental/agent_loop/tool_agent_loop.py) a tool's answer is
a `{"role": "tool"}` message put through the chat template and appended to the response
with response_mask 0, and the Hermes parser (verl/experimental/agent_loop/tool_parser.py)
reads calls as `<tool_call>{"name": ..., "arguments": ...}</tool_call>`.  Qwen-style
templates render tool messages as `<|im_start|>user\\n<tool_response>\\n…\\n</tool_response>
<|im_end|>\\n<|im_start|>assistant\\n`; with the special tokens skipped, the role words stay
on lines of their own.  So the output splits at its <tool_response> blocks into assistant
and tool turns, and the input at its role lines.  There are no token arrays: turn metrics
and the loss mask are not known for these dumps.
"""
from __future__ import annotations

import re

_TOOL_RESPONSE = re.compile(r"(?:\n?user\n)?<tool_response>\n?(.*?)\n?</tool_response>"
                            r"(?:\n?assistant\n)?", re.DOTALL)
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_ROLE_LINE = re.compile(r"(?m)^(system|user|assistant)\n")


def is_multi_turn(output: object) -> bool:
    return isinstance(output, str) and ("<tool_response>" in output or "<tool_call>" in output)


def assistant_turn(text: str) -> dict:
    """An assistant turn from its text: Hermes <tool_call> blocks become its tool calls."""
    calls = [{"name": "", "arguments": body} for body in _TOOL_CALL.findall(text)]
    for call in calls:
        # {"name": ..., "arguments": {...}} as the Hermes parser reads it; else left raw
        match = re.match(r'\s*\{\s*"name"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"arguments"\s*:\s*'
                         r'(.*)\}\s*$', call["arguments"], re.DOTALL)
        if match:
            call["name"], call["arguments"] = match.group(1), match.group(2).strip()
    return {"role": "assistant", "content": _TOOL_CALL.sub("", text).strip(),
            "tool_calls": calls}


def prompt_turns(text: str) -> list[dict]:
    """The prompt's turns from its role lines; one user turn when it has none."""
    marks = list(_ROLE_LINE.finditer(text))
    if not marks or text[: marks[0].start()].strip():
        return [{"role": "user", "content": text}]
    turns = []
    for mark, after in zip(marks, marks[1:] + [None]):
        body = text[mark.end(): after.start() if after else len(text)].rstrip("\n")
        if body or after is not None:
            turns.append({"role": mark.group(1), "content": body})
    return turns


def response_turns(text: str) -> list[dict]:
    """The response's assistant and tool turns, split at its <tool_response> blocks."""
    turns, at = [], 0
    for match in _TOOL_RESPONSE.finditer(text):
        if text[at:match.start()].strip():
            turns.append(assistant_turn(text[at:match.start()]))
        turns.append({"role": "tool", "content": match.group(1)})
        at = match.end()
    if text[at:].strip() or not turns:
        turns.append(assistant_turn(text[at:]))
    return turns
