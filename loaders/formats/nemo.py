"""NeMo-RL's train_data_step{N}.jsonl: one line per sample, over the whole sequence.

Written by nemo_rl/utils/logger.py `log_batched_dict_as_jsonl` from
nemo_rl/algorithms/grpo.py (`idx` is the line's place in the file, not a group).  Each
value is the sample's length-1 slice of the batch (`"rewards": [1.0]`, `"token_ids":
[[...]]`), so the board unwraps it first.  `token_ids`, `generation_logprobs` (inference
engine), `prev_logprobs` (trainer) and every per-token list span prompt and response,
right-padded; `token_loss_mask` marks the response tokens the board keeps.

`content` holds each message's text, without roles: the prompt's messages, then for every
turn the model's answer and the environment's observation, which the rollout appends after
every turn, the last one too (nemo_rl/experience/rollouts.py).  With T runs of trained
tokens (T answers) the last 2T messages alternate answer and observation: the response is
the last answer, not the last message, and several turns become a conversation whose
tokens name their answer.  Validation lines (`val_data_step{N}.jsonl`) hold `content` as
`{role, content}` messages.  `rewards` becomes `reward`.  There is no reference model, so
no log_ratio; the mismatch KL between inference and trainer logprobs is derived per token.
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


def _turn_of_tokens(mask: object) -> list[int]:
    """For each trained token, which answer (run of trained tokens) it is in."""
    if not isinstance(mask, list):
        return []
    turns, run, inside = [], -1, False
    for on in mask:
        if on and not inside:
            run += 1
        inside = bool(on)
        if inside:
            turns.append(run)
    return turns


def _conversation(content: object, mask: object) -> dict:
    """prompt and response (one answer), or the messages (several), from `content`."""
    if isinstance(content, list) and content and all(isinstance(m, dict) for m in content):
        return {S.MESSAGES: content}  # a validation line: its roles are written
    turns = _turn_of_tokens(mask)
    answers = turns[-1] + 1 if turns else 0
    first = len(content) - 2 * answers if isinstance(content, list) else -1
    if answers == 0 or first < 1:  # not the layout the rollout writes: the last is the answer
        prompt, response = (content[:-1], content[-1]) if isinstance(content, list) and len(
            content) > 1 else (content, None)
        return {S.PROMPT: prompt, S.RESPONSE: response}
    if answers == 1:
        return {S.PROMPT: content[:first], S.RESPONSE: content[first]}
    roles = ["user"] * first + ["assistant", "environment"] * answers
    return {S.MESSAGES: [{"role": r, "content": c} for r, c in zip(roles, content)],
            S.TOKEN_TURNS: [first + 2 * t for t in turns]}


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
    said = _conversation(record.pop("content", None), record.get("token_loss_mask"))
    part = response_part(record, "token_loss_mask")
    sample = {key: value for key, value in part.items()
              if key not in ("token_ids", "generation_logprobs", "prev_logprobs", "rewards",
                             "input_lengths", "idx")}
    if S.MESSAGES in said:
        sample.update(said)  # loaders.parse.conversation takes the texts from the turns
    else:
        sample[S.PROMPT] = _prompt_text(said[S.PROMPT], record)
        response = said[S.RESPONSE]
        sample[S.RESPONSE] = text_of(response.get("content") if isinstance(response, dict)
                                     else response)
    sample[S.RESPONSE_TOKENS] = id_tokens(part.get("token_ids"))
    sample[S.LOGPROBS] = part.get("prev_logprobs")
    sample["inference_logprobs"] = part.get("generation_logprobs")
    sample.update(mismatch(part.get("prev_logprobs"), part.get("generation_logprobs")))
    sample[S.REWARD] = scalar_reward(record.get("rewards"))
    sample[S.VALIDATION] = context.validation
    return [sample]
