"""ROLL's two dumps.

save_logging_board_dir (data_{YYYYmmdd_HHMMSS}_{ms}.jsonl): RLLoggingBoard keys plus
`log_probs2`, `old_log_probs2_entropy` and `new_response_mask`.  `response_tokens` and the
per-token lists are padded to the batch's response length: the mask (1s then 0s) picks the
real tokens.  ROLL writes token-level *rewards* into `values` (the same numbers as
`token_rewards`, prompt positions included), so the board drops `values` (no critic) and
reads `token_rewards` from its last response-length positions, then masks them.
`old_log_probs2_entropy` becomes the `entropy` token array.

rollout_dump_dir (rollout_dump_data.step_{N}.jsonl): one line per step holding a dict of
equal-length lists; it is exploded into one sample per list position.  The RLVR pipeline
writes the dataset's columns with `responses` and `scores` (roll/pipeline/rlvr/utils.py
`dump_rollout_to_specific_path`); the agentic one writes `trajectory_data`, `messages`
and `tools` as JSON text, one trajectory a position (roll/pipeline/agentic/utils.py
`dump_rollout_trajectories`, the dicts of roll/pipeline/agentic/env_manager/
agent_native_env_manager.py): the conversation, `reward_info.episode_reward` as the reward,
`env_info.group_id` as the group, `env_info.mode` ("val") for validation and
`length_info.truncated` for truncation.
"""
from __future__ import annotations

import orjson

from loaders import schema as S
from loaders.formats.context import FileContext
from loaders.formats.masking import masked

MASK = "new_response_mask"
_DUMP_RENAMES = {"global_step": S.STEP, "responses": S.RESPONSE, "scores": S.REWARD,
                 "response": S.RESPONSE, "score": S.REWARD}


def normalize_board(record: dict, context: FileContext) -> list[dict]:
    rewards = record.get(S.TOKEN_REWARDS)
    if rewards is None:
        rewards = record.get(S.VALUES)
    record.pop(S.VALUES, None)
    mask = record.pop(MASK, None)
    if isinstance(mask, list):
        if isinstance(rewards, list) and len(rewards) > len(mask):
            rewards = rewards[len(rewards) - len(mask):]
        record[S.TOKEN_REWARDS] = rewards
        for key, value in list(record.items()):
            if isinstance(value, list) and len(value) == len(mask):
                record[key] = masked(value, mask)
    else:
        record[S.TOKEN_REWARDS] = rewards
    if "old_log_probs2_entropy" in record and "entropy" not in record:
        record["entropy"] = record.pop("old_log_probs2_entropy")
    return [record]  # `validation` as written: the summary reads it strictly


def _json(value: object) -> object:
    """A column's JSON text as its value (orjson: its depth is bounded, where json's
    recursion would not be); text that does not parse stays text."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _part(info: object, key: str) -> dict:
    part = info.get(key) if isinstance(info, dict) else None
    return part if isinstance(part, dict) else {}


def _trajectory(sample: dict) -> dict:
    """An agentic position: its conversation and the facts of its trajectory."""
    info = _json(sample.pop("trajectory_data", None))
    messages = _json(sample.pop(S.PROMPT, None))
    env, length = _part(info, "env_info"), _part(info, "length_info")
    failure = _part(info, "failure_info")
    out = {k: v for k, v in sample.items() if k != "tools"}
    if isinstance(messages, list):
        out[S.MESSAGES] = messages
    out.update({S.REWARD: _part(info, "reward_info").get("episode_reward"),
                "group_id": env.get("group_id"), "tag": env.get("tag"),
                "env_id": env.get("env_id"), "truncated": length.get("truncated"),
                "terminated": length.get("terminated"), "num_actions": length.get("num_actions"),
                "stop_reason": failure.get("stop_reason"),
                "failure_mode": failure.get("failure_mode") or None})
    out[S.VALIDATION] = out[S.VALIDATION] or env.get("mode") == "val"
    return out


def explode_dump(record: dict, context: FileContext) -> list[dict]:
    lengths = {len(v) for v in record.values() if isinstance(v, list)}
    count = max(lengths) if lengths else 0
    samples = []
    for i in range(count):
        sample = {}
        for key, value in record.items():
            item = value[i] if isinstance(value, list) and len(value) == count else value
            sample[_DUMP_RENAMES.get(key, key)] = item
        if S.PROMPT not in sample and "messages" in sample:
            sample[S.PROMPT] = sample.pop("messages")
        sample[S.VALIDATION] = context.validation
        samples.append(_trajectory(sample) if "trajectory_data" in sample else sample)
    return samples
