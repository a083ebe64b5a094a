"""Structured agent trajectories: ART's Parquet trajectory logs and rLLM's episode files.

ART (src/art/utils/trajectory_logging.py `write_trajectory_groups_parquet`) writes
`trajectories/{split}/{step:04d}.parquet`, one row per trajectory: `group_index`,
`group_metadata`, `group_metrics`, `reward`, `metrics` and `metadata` (JSON strings),
`tools`, `logs`, and `messages`, a list of `{role, content, tool_calls (a JSON string),
tool_call_id, trainable}` where `trainable` marks the sampled (Choice) messages.  No tokens.

rLLM (rllm/utils/episode_logger.py `EpisodeLogger.log_episode`) writes one indented JSON
file per episode, `<episode_log_dir>/episodes/{train,val}_step_{N}_epoch_{E}/
episode_hash{task_hash}_id{episode_id}.json`: `training_step`, `task`, `task_hash`,
`is_correct`, `termination_reason`, `metrics`, and `trajectories`, each with `name`,
`reward` and `steps` whose `chat_completions` is the conversation so far.  One sample per
trajectory; its last step's chat_completions is its conversation.  No tokens.
`rllm eval` (rllm/eval/episode_store.py) writes `<run dir>/episodes/episode_{idx:06d}_{task}.json`,
an `Episode.model_dump` (rllm/types.py) with `eval_idx`: evaluation samples at step 0, whose
steps carry `response_ids` and `logprobs` (each step one assistant turn) as token arrays.
"""
from __future__ import annotations

import json
from pathlib import Path

from loaders import schema as S
from loaders.find.remote import open_binary
from loaders.formats.context import FileContext
from loaders.parse.conversation import flat_text
from loaders.parse.record import BadLine, parse_object

MAX_EPISODE_BYTES = 64 << 20  # an episode file beyond this is a problem, not a read


def read_json(path: Path | str, rel: str = "") -> list[dict]:
    """A whole-file JSON object as the file's one record.  Raises ValueError or OSError."""
    with open_binary(path) as handle:
        blob = handle.read(MAX_EPISODE_BYTES + 1)
    if len(blob) > MAX_EPISODE_BYTES:
        raise ValueError(f"an episode file over {MAX_EPISODE_BYTES >> 20} MB is not read")
    try:
        return [parse_object(blob)]
    except BadLine as err:
        raise ValueError(str(err)) from None


def _loads(value: object) -> object:
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _split(messages: list[dict], first: int) -> dict:
    return {S.MESSAGES: messages, S.PROMPT: flat_text(messages[:first]),
            S.RESPONSE: flat_text(messages[first:])}


def art(record: dict, context: FileContext) -> list[dict]:
    messages = []
    for raw in record.get("messages") or []:
        message = {k: v for k, v in (raw or {}).items() if v is not None and k != "tool_calls"}
        calls = _loads((raw or {}).get("tool_calls"))
        if isinstance(calls, list):
            message["tool_calls"] = calls
        messages.append(message)
    first = next((i for i, m in enumerate(messages) if m.get("trainable")), len(messages))
    sample = {k: _loads(v) for k, v in record.items() if k not in ("messages", "logs")}
    for key in ("metrics", "group_metrics"):
        if isinstance(sample.get(key), dict):
            sample.update({f"{key}_{k}": v for k, v in sample.pop(key).items()})
    sample.update(_split(messages, first))
    split = context.rel.rsplit("/", 2)[-2] if context.rel.count("/") else "train"
    sample[S.VALIDATION] = split not in ("train", "training")
    return [sample]


def _step_tokens(steps: list[dict], messages: list) -> dict:
    """Each step's sampled tokens (an eval episode's `response_ids` and `logprobs`) in
    order, with the turn of the step's assistant message; {} without them."""
    answers = [i for i, m in enumerate(messages) if isinstance(m, dict)
               and m.get("role") == "assistant"]
    ids, logprobs, turns = [], [], []
    for k, step in enumerate(steps):
        part = step.get("response_ids")
        if not isinstance(part, list) or not part:
            continue
        ids += [str(t) for t in part]
        lp = step.get("logprobs")
        logprobs += lp if isinstance(lp, list) and len(lp) == len(part) else [None] * len(part)
        turns += [answers[k] if k < len(answers) else -1] * len(part)
    if not ids:
        return {}
    return {S.RESPONSE_TOKENS: ids, S.LOGPROBS: logprobs, S.TOKEN_TURNS: turns}


def _trajectory(base: dict, trajectory: dict) -> dict:
    steps = [s for s in trajectory.get("steps") or [] if isinstance(s, dict)]
    messages = next((s["chat_completions"] for s in reversed(steps)
                     if isinstance(s.get("chat_completions"), list)), [])
    first = next((i for i, m in enumerate(messages)
                  if isinstance(m, dict) and m.get("role") == "assistant"), len(messages))
    return {**base, **_split(messages, first), S.REWARD: trajectory.get("reward"),
            "agent": trajectory.get("name"), "num_steps": len(steps),
            **_step_tokens(steps, messages)}


def rllm(record: dict, context: FileContext) -> list[dict]:
    reason = str(record.get("termination_reason") or "")
    evaluation = "eval_idx" in record  # `rllm eval`'s episode store: no training step
    task = record.get("task_hash") or str(record.get("id") or "").split(":")[0] or None
    base = {S.STEP: record.get("training_step", 0 if evaluation else None), "group_id": task,
            "prompt_uid": task, "is_correct": record.get("is_correct"),
            "termination_reason": reason,
            "finish_reason": "length" if "trunc" in reason.lower() else reason.lower(),
            S.VALIDATION: evaluation or "/val_step_" in f"/{context.rel}"}
    base.update({f"metric_{k}": v for k, v in (record.get("metrics") or {}).items()
                 if isinstance(v, (int, float))})
    trajectories = [t for t in record.get("trajectories") or [] if isinstance(t, dict)]
    return [_trajectory(base, t) for t in trajectories] or [{**base, S.PROMPT: ""}]
