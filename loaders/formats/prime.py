"""prime-rl token exports: token_exports/step_N/rank_R.jsonl, read once step_N/STABLE exists.

Lines hold `token_ids`, `loss_mask`, `advantages`, `rewards`, `inference_logprobs`,
`trainer_logprobs`, `entropy`, `mismatch_kl`, `importance_ratio`, ... over the whole
sequence; the loss mask picks the completion tokens, and the token ids before it stand for
the prompt (the export has no prompt text), so a prompt's answers form one group.
`rewards` is the sample's reward broadcast over its tokens.  There is no token text:
tokens show as their ids.
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

# bookkeeping lists that are not metrics
_DROPPED = frozenset({"token_ids", "trainer_logprobs", "rewards", "position_ids", "losses",
                      "is_masked", "is_masked_high", "is_masked_low"})


def normalize(record: dict, context: FileContext) -> list[dict]:
    part = response_part(record, "loss_mask")
    sample = {key: value for key, value in part.items() if key not in _DROPPED}
    sample[S.RESPONSE_TOKENS] = id_tokens(part.get("token_ids"))
    # no prompt text in a token export: its token ids name the prompt (and so the group)
    sample.setdefault(S.PROMPT, prompt_ids_text(record, "loss_mask"))
    sample[S.LOGPROBS] = part.get("trainer_logprobs")
    if "mismatch_kl" not in part:
        sample.update(mismatch(part.get("trainer_logprobs"), part.get("inference_logprobs")))
    rewards = part.get("rewards")
    if isinstance(rewards, list):
        rewards = next((r for r in rewards if r is not None), None)
    sample[S.REWARD] = scalar_reward(rewards)
    sample[S.VALIDATION] = context.validation
    return [sample]
