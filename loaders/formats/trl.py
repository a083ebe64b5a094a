"""TRL's log_completions: completions/completions_{step:05d}.parquet, one row per sample.

Columns: `step`, `prompt`, `completion`, one column per reward function, `advantage` and
extras.  The board's reward is the sum of the reward-function columns that are not NaN
(TRL's default weights are all 1); each stays a column of its own.  The prompt is the
rendered chat template as a string.
"""
from __future__ import annotations

import math
from numbers import Real

from loaders import schema as S
from loaders.formats.context import FileContext

_NOT_REWARDS = frozenset({S.STEP, "advantage", "prompt", "completion"})


def normalize(record: dict, context: FileContext) -> list[dict]:
    sample = {key: value for key, value in record.items() if key not in ("completion",)}
    sample[S.RESPONSE] = record.get("completion")
    rewards = [v for k, v in record.items() if k not in _NOT_REWARDS
               and isinstance(v, Real) and not isinstance(v, bool) and not math.isnan(v)]
    sample[S.REWARD] = sum(rewards) if rewards else None
    sample[S.VALIDATION] = context.validation
    return [sample]
