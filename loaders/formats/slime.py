"""slime / miles debug dumps: `rollout_data/{rollout_id}.pt` and `train_data/{rollout_id}.pt`.

slime writes them with torch.save when `--dump-details DIR` (or
`--save-debug-rollout-data` / `--save-debug-train-data`) is set (slime/utils/arguments.py):
- rollout data (slime/observability/rollout_data_utils.py `save_debug_rollout_data`):
  `{"rollout_id", "samples": [Sample.to_dict()]}` (slime/utils/types.py `Sample`), each with
  `prompt` (text or chat messages), `response`, `tokens` (prompt + response ids),
  `response_length`, `loss_mask` over the response (0 on tool / environment tokens in
  multi-turn rollouts), `rollout_log_probs`, `reward` (a number or a dict), `label`,
  `status`, `group_index`, `remove_sample`, `metadata`; evaluation dumps are `eval_{id}.pt`;
- train data (slime/observability/train_data_utils.py `_build_dump_payload`, format 2):
  `{"rollout_id", "rank", "samples": [...], "dp_shards", "raw_reward"}`, each sample the
  trainer's per-sample tensors: `tokens`, `response_lengths`, `loss_masks`, `log_probs`,
  `ref_log_probs`, `values`, `advantages`, `returns`, `kl`, `entropy`, `rollout_log_probs`,
  `rewards`.
Files are read by loaders.parse.torch_pickle (no torch, no code from the file); a rollout's
files are joined by loaders.formats.slime_files.

Truncation is the dump's word: `status` (Sample.Status, from SGLang's finish reason) decides,
else the train side's 0/1 `truncated`; only a sample with neither is left to the length cap
(loaders.index.table.truncated).
"""
from __future__ import annotations

import numpy as np

from loaders import schema as S
from loaders.formats.context import FileContext
from loaders.formats.token_ids import mismatch

_DROPPED = frozenset({"tokens", "multimodal_inputs", "multimodal_train_inputs",
                      "rollout_routed_experts", "rollout_top_p_token_ids",
                      "rollout_top_p_token_offsets", "apply_chat_template_kwargs",
                      "response_length", "response_lengths", "total_lengths",
                      "loss_masks", "log_probs", "ref_log_probs", "rewards", "label",
                      "rollout_log_probs", "prompt", "response", "reward", "loss_mask",
                      "non_generation_time"})
_REWARD_KEYS = ("reward", "score", "acc", "accuracy")
_STATUSES = frozenset({"completed", "truncated", "aborted", "failed"})  # Sample.Status, done


def _plain(value: object) -> object:
    return value.tolist() if isinstance(value, np.ndarray) else value


def _reward(value: object) -> tuple[object, dict]:
    if not isinstance(value, dict):
        return value, {}
    columns = {f"reward_{k}": v for k, v in value.items() if isinstance(v, (int, float))}
    return next((value[k] for k in _REWARD_KEYS if isinstance(value.get(k), (int, float))),
                None), columns


def _length(record: dict) -> int:
    n = record.get("response_length", record.get("response_lengths"))
    return int(n) if isinstance(n, (int, float, np.integer)) else 0


def _versions(names: object) -> dict:
    """`weight_versions` (a str a generate call; miles/dashboard/dump_reader.py reads the
    numeric ones the same way) as the oldest and newest policy version."""
    found = [int(v) for v in names if str(v).isdigit()] if isinstance(names, list) else []
    return {S.POLICY_VERSION: min(found), S.POLICY_VERSION_NEWEST: max(found)} if found else {}


def normalize(record: dict, context: FileContext) -> list[dict]:
    record = {k: _plain(v) for k, v in record.items()}
    n, tokens = _length(record), record.get("tokens")
    sample = {k: v for k, v in record.items() if k not in _DROPPED}
    sample[S.STEP] = record.get("rollout_id")
    if isinstance(tokens, list) and n:
        sample[S.RESPONSE_TOKENS] = [str(t) for t in tokens[-n:]]
        sample.setdefault(S.PROMPT, " ".join(map(str, tokens[:-n])))
    prompt = record.get("prompt")
    if isinstance(prompt, list):  # chat messages: the response is the last assistant turn
        sample[S.MESSAGES] = [*prompt, {"role": "assistant", "content": record.get("response")}]
    if "prompt" in record:
        sample[S.PROMPT] = prompt
    sample[S.RESPONSE] = record.get("response")
    sample[S.GROUND_TRUTH] = record.get("label")
    sample[S.REWARD], columns = _reward(record.get("reward", record.get("rewards")))
    sample.update(columns)
    sample[S.LOSS_MASK] = record.get("loss_mask", record.get("loss_masks"))
    sample[S.LOGPROBS] = record.get("log_probs", record.get("rollout_log_probs"))
    sample[S.REF_LOGPROBS] = record.get("ref_log_probs")
    if "log_probs" in record and "rollout_log_probs" in record:
        sample["inference_logprobs"] = record["rollout_log_probs"]
        sample.update(mismatch(record["log_probs"], record["rollout_log_probs"]))
    sample.update(_versions(record.get("weight_versions")))
    media = record.get("multimodal_inputs")  # a VLM prompt's images: PIL images, pickled
    if isinstance(media, dict) and isinstance(media.get("image"), list):
        sample["images"] = media["image"]
    if isinstance(record.get("non_generation_time"), (int, float)):  # tools, environment
        sample[S.TOOL_S] = record["non_generation_time"]
    status = record.get("status")
    if isinstance(status, str) and status in _STATUSES:
        sample["truncated"] = status == "truncated"
    sample[S.VALIDATION] = context.rel.rsplit("/", 1)[-1].startswith("eval_")
    return [sample]
