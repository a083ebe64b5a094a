"""NeMo-RL's train_data_step{N}.jsonl: one line per sample, over the whole sequence.

Each value is the sample's length-1 slice of the batch (`"rewards": [1.0]`,
`"token_ids": [[...]]`), so the board unwraps it first.  `token_ids`,
`generation_logprobs` (inference engine), `prev_logprobs` (trainer) and every per-token list
span prompt and response, right-padded; `token_loss_mask` marks the response tokens the
board keeps.  `content` holds the conversation; its last entry is the response.
`rewards` becomes `reward`.  There is no reference model, so no log_ratio; the mismatch KL
between inference and trainer logprobs is derived per token.
"""
from __future__ import annotations

from loaders import schema as S
from loaders.formats.context import FileContext
from loaders.formats.token_ids import (
    id_tokens,
    mismatch,
    prompt_ids_text,
    response_part,
    scalar_reward,
)
from loaders.parse.text import text_of


def _split_content(content: object) -> tuple[object, object]:
    if isinstance(content, list) and len(content) > 1:
        return content[:-1], content[-1]
    return content, None


def _prompt_text(prompt: object, record: dict) -> object:
    """`content` holds each message's text: the prompt's messages as lines, not a JSON
    list; without `content`, the prompt's token ids, space-separated."""
    if isinstance(prompt, list) and all(isinstance(m, str) for m in prompt):
        return "\n".join(prompt)
    return prompt_ids_text(record, "token_loss_mask") if prompt is None else prompt


def _unwrap(record: dict) -> dict:
    return {k: v[0] if isinstance(v, list) and len(v) == 1 else v for k, v in record.items()}


def normalize(record: dict, context: FileContext) -> list[dict]:
    record = _unwrap(record)
    # the messages are no per-token list, even when there are as many as tokens
    prompt, response = _split_content(record.pop("content", None))
    part = response_part(record, "token_loss_mask")
    sample = {key: value for key, value in part.items()
              if key not in ("token_ids", "generation_logprobs", "prev_logprobs", "rewards",
                             "input_lengths")}
    sample[S.PROMPT] = _prompt_text(prompt, record)
    sample[S.RESPONSE] = text_of(response.get("content") if isinstance(response, dict)
                                 else response)
    sample[S.RESPONSE_TOKENS] = id_tokens(part.get("token_ids"))
    sample[S.LOGPROBS] = part.get("prev_logprobs")
    sample["inference_logprobs"] = part.get("generation_logprobs")
    sample.update(mismatch(part.get("prev_logprobs"), part.get("generation_logprobs")))
    sample[S.REWARD] = scalar_reward(record.get("rewards"))
    sample[S.VALIDATION] = context.validation
    return [sample]
