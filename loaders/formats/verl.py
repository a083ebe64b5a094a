"""verl's rollout and validation dumps: {global_step}.jsonl, one line per sample.

Lines hold `input`, `output`, `gts`, `score`, `step`, every reward_extra_info key
(`acc`, `format_reward`, ...) and `request_id`/`uid` when present; validation lines also hold
`reward`.  There is no token-level data.  A multi-turn (tool agent loop) sample gets
its turns back from the texts (loaders.formats.verl_turns); a line that carries `messages`
itself (a custom dump where the conversation survives) keeps them.
"""
from __future__ import annotations

from loaders import schema as S
from loaders.formats.context import FileContext
from loaders.formats.verl_turns import is_multi_turn, prompt_turns, response_turns

_RENAMES = {"input": S.PROMPT, "output": S.RESPONSE, "gts": S.GROUND_TRUTH, "score": S.REWARD}


def normalize(record: dict, context: FileContext) -> list[dict]:
    validation = context.validation or S.REWARD in record
    sample = {}
    for key, value in record.items():
        if key == S.REWARD:
            key = "verl_reward"  # the validation copy of the score; `score` is the reward
        sample[_RENAMES.get(key, key)] = value
    sample[S.VALIDATION] = validation
    if S.MESSAGES not in sample and is_multi_turn(sample.get(S.RESPONSE)):
        sample[S.MESSAGES] = (prompt_turns(str(sample.get(S.PROMPT) or ""))
                              + response_turns(sample[S.RESPONSE]))
    return [sample]
