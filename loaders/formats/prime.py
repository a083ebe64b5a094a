"""prime-rl token exports: token_exports/step_N/rank_R.jsonl, read once step_N/STABLE exists.

Written with `enable_token_export` by src/prime_rl/trainer/rl/token_export.py
`TokenExporter.export`, one line a sample (`_export_columns`): `step`, `rank`,
`micro_step`, `micro_sequence_idx`, `export_sequence_idx`, `env_name`, and per token
`token_ids`, `position_ids`, `loss_mask`, `advantages`, `inference_logprobs`,
`trainer_logprobs`, `entropy`, `mismatch_kl`, `log_importance_ratio`, `importance_ratio`,
`prob_delta`, `is_masked(_high/_low)` and the loss weights `rl_weights`, `ce_weights`,
`ref_kl_weights` (null where not set; a non-finite value is null too).  The loss mask picks
the completion tokens, and the token ids before it stand for the prompt (the export has no
prompt text), so a prompt's answers form one group.  Current exports hold no reward
(prime-rl 0be5ac452 took it out): the advantages are the sample's signal.  Older ones held
`rewards`, the reward broadcast over the tokens, read as the reward.  There is no token
text: tokens show as their ids.
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
_DROPPED = frozenset({"token_ids", "trainer_logprobs", "rewards", "position_ids", "is_masked",
                      "is_masked_high", "is_masked_low", "schema_version", "rank",
                      "micro_step", "micro_sequence_idx", "env_name", "log_importance_ratio",
                      "rl_weights", "ce_weights", "ref_kl_weights"})


def normalize(record: dict, context: FileContext) -> list[dict]:
    part = response_part(record, "loss_mask")
    sample = {key: value for key, value in part.items() if key not in _DROPPED}
    sample[S.RESPONSE_TOKENS] = id_tokens(part.get("token_ids"))
    # no prompt text in a token export: its token ids name the prompt (and so the group)
    sample.setdefault(S.PROMPT, prompt_ids_text(record, "loss_mask"))
    ids = part.get("token_ids")  # and the response's ids stand for its text
    sample.setdefault(S.RESPONSE, " ".join(map(str, ids)) if isinstance(ids, list) else None)
    sample[S.LOGPROBS] = part.get("trainer_logprobs")
    if "mismatch_kl" not in part:
        sample.update(mismatch(part.get("trainer_logprobs"), part.get("inference_logprobs")))
    rewards = part.get("rewards")
    if isinstance(rewards, list):
        rewards = next((r for r in rewards if r is not None), None)
    sample[S.REWARD] = scalar_reward(rewards)
    sample["env"] = record.get("env_name")
    sample[S.VALIDATION] = context.validation
    return [sample]
