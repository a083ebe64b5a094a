"""open-instruct's saved traces: {rollouts_save_path}/{run_name}_rollouts_{shard:06d}.jsonl.

Written with `--save_traces` (open_instruct/data_loader.py), one line a sample
(open_instruct/rl_utils.py `_save_rollouts`, `asdict(RolloutRecord)`): `step`,
`sample_idx`, `prompt_idx` (the prompt's index in the step: its group), `prompt_tokens` and
`response_tokens` (token ids), `reward`, `advantage`, `finish_reason` (vLLM's: "stop",
"length"), `dataset`, `ground_truth`, `request_info` (tool calls, timeouts, errors, runtimes)
and `logprobs` (vLLM's, of the sampled tokens).  There is no text and no reference model:
the prompt's and the response's token ids stand for their texts, and there is no KL.
`{run_name}_metadata.jsonl` beside them holds the run name, git commit and model
(loaders.find.walk leaves it out).
"""
from __future__ import annotations

from loaders import schema as S
from loaders.formats.context import FileContext
from loaders.formats.token_ids import id_tokens

_REQUEST_NUMBERS = ("num_calls", "timeouts", "tool_runtimes")


def _text(value: object) -> object:
    """A ground truth as text: token ids joined, a list of answers one per line."""
    if isinstance(value, list):
        return ("\n" if any(isinstance(v, str) for v in value) else " ").join(map(str, value))
    return value


def normalize(record: dict, context: FileContext) -> list[dict]:
    prompt = record.get("prompt_tokens")
    sample = {
        S.STEP: record.get("step"), "sample_idx": record.get("sample_idx"),
        "group_id": record.get("prompt_idx"),
        # no prompt text: its token ids name the prompt across steps (Prompts' history)
        S.PROMPT: " ".join(map(str, prompt)) if isinstance(prompt, list) else None,
        S.RESPONSE_TOKENS: id_tokens(record.get("response_tokens")),
        # no response text either: its token ids stand for it (a tokenizer decodes tokens)
        S.RESPONSE: _text(record.get("response_tokens")),
        S.LOGPROBS: record.get("logprobs"), S.REWARD: record.get("reward"),
        "advantage": record.get("advantage"), "finish_reason": record.get("finish_reason"),
        "data_source": record.get("dataset"), S.GROUND_TRUTH: _text(record.get("ground_truth")),
        S.VALIDATION: context.validation,
    }
    info = record.get("request_info")
    if isinstance(info, dict):
        sample.update({key: info[key] for key in _REQUEST_NUMBERS
                       if isinstance(info.get(key), (int, float))})
        if info.get("tool_errors"):
            sample["tool_errors_text"] = str(info["tool_errors"])
    return [sample]
