"""Text rollout logs of AReaL and SkyRL, whose turns come back from the chat template.

AReaL (areal/infra/workflow_executor.py `_dump_trajectory`) appends to
`<log path>/rollout/{tail_version}/{task_id}.jsonl` (`eval-rollout/` for evaluation) one line
per sample: `task_id`, `sample_idx`, `seqlen`, `prompt_len`, `head_version`,
`tail_version`, `reward`, and `prompt` / `completion` decoded with the special tokens kept.
Quirk: `prompt_len` is seqlen minus the *trained* tokens, so in a multi-turn rollout, whose
loss mask is 0 on tool outputs, the prompt/completion split moves into the conversation by
the masked tokens; the turns are therefore read from the two texts joined.  No token arrays.

SkyRL (skyrl/train/utils/trainer_utils.py `dump_per_dataset_eval_results`) writes
`<export_path>/dumped_evals/global_step_{N}_evals/{data_source}.jsonl` (`eval_only/` without a
step): `input_prompt`, `output_response` (decoded with special tokens), `score` (a number,
or per-token rewards, summed), `stop_reason`, `env_class`, `env_extras`, `data_source`; its
`aggregated_results.jsonl` holds metrics.  SkyRL's training-input pickles
(`dumped_data/global_step_{N}_training_input.pkl`) are never opened: a pickle runs code.
"""
from __future__ import annotations

import re

from loaders import schema as S
from loaders.formats.chatml import chatml_turns
from loaders.formats.context import FileContext

_SKYRL_STEP = re.compile(r"global_step_(\d+)_evals/")


def areal(record: dict, context: FileContext) -> list[dict]:
    sample = {k: v for k, v in record.items() if k != "completion"}
    sample[S.RESPONSE] = record.get("completion")
    sample[S.STEP] = record.get("tail_version", context.step)
    sample["group_id"] = record.get("task_id")
    # the policy versions at the start and the end of its generation (its step is the tail)
    sample[S.POLICY_VERSION] = record.get("head_version")
    sample[S.POLICY_VERSION_NEWEST] = record.get("tail_version")
    turns = chatml_turns(f"{record.get('prompt') or ''}{record.get('completion') or ''}")
    if len(turns) > 2:
        sample[S.MESSAGES] = turns
    sample[S.VALIDATION] = context.validation or "eval-rollout/" in f"/{context.rel}"
    return [sample]


def skyrl(record: dict, context: FileContext) -> list[dict]:
    sample = {k: v for k, v in record.items()
              if k not in ("input_prompt", "output_response", "score")}
    sample[S.PROMPT] = record.get("input_prompt")
    sample[S.RESPONSE] = record.get("output_response")
    score = record.get("score")
    if isinstance(score, list):  # token-level rewards
        score = sum(v for v in score if isinstance(v, (int, float)))
    sample[S.REWARD] = score
    match = _SKYRL_STEP.search(context.rel)
    sample[S.STEP] = int(match.group(1)) if match else 0
    turns = chatml_turns(f"{record.get('input_prompt') or ''}"
                         f"{record.get('output_response') or ''}")
    if len(turns) > 2:
        sample[S.MESSAGES] = turns
    sample[S.VALIDATION] = True  # SkyRL dumps evaluations only
    return [sample]


def areal_sessions(record: dict, context: FileContext) -> list[dict]:
    """AReaL's session traces (areal/utils/perf_tracer.py `SessionRecord.to_dict`, written to
    `<trial>/session_tracer/[role/]sessions-r{rank}.jsonl`): no sample of their own.  A
    request's timing (submit_ts, finalized_ts, total_s, generate_s, reward_s, toolcall_s) is
    joined to the samples of its task_id where a view asks (loaders.serve.sessions)."""
    return []
