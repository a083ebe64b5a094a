"""Every trainer metric name the board recognises (verl, ROLL, OpenRLHF, prime-rl, TRL).

The health signals, the Health panels (stage times, memory, devices, clip fraction) and the
glossary's classification all read their patterns here, so teaching the board a new
trainer's names means editing this one file. Patterns are regexes searched
case-insensitively in the full metric name; every tuple runs from most to least specific.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from loaders import schema as S

# ---- words the trainers use (regex alternations), shared with the glossary -----------------
POLICY_KL_WORDS = r"ppo_kl|approx_?kl|policy_?kl"  # size of one update (verl, ROLL)
KL_LOSS_WORDS = r"kl_loss"  # KL to the frozen reference, as a loss term
GRAD_NORM_WORDS = r"grad_norm"
CLIP_FRACTION_WORDS = r"pg_clipfrac|ppo_ratio_clipfrac|clipfrac|clip_ratio|clip_frac"
THROUGHPUT_WORDS = r"tps|throughput|tokens_per_s|tokens_per_second|tok_per_s"
TRUNCATED_RESPONSES = r"response_length\w*/clip_ratio"  # share cut at the max length
STAGE_TIME_PREFIXES = ("time", "timing_s", "timing", "timer")
STAGE_TIME = rf"^(?:{'|'.join(STAGE_TIME_PREFIXES)})/"  # e.g. timing_s/gen, time/step_generate
WHOLE_STEP_WORDS = r"step|total|iteration|step_total"  # the step's wall clock, not a stage

MISMATCH_PREFIXES = r"rollout_corr/|mismatch/"  # their `kl` is the mismatch, not the policy's

# ---- metric kinds that are not health signals --------------------------------------------
CLIP_FRACTION = "clip_fraction"
THROUGHPUT = "throughput"
# shares of tokens whose importance ratio is above / below the truncation bounds (their sum
# is schema.H_IS_OUTSIDE)
IS_SHARE_HIGH, IS_SHARE_LOW = "is_share_high", "is_share_low"


def _ratio_first(word: str) -> tuple[str, ...]:
    """A ratio or rate before a count of the same thing: the alert thresholds are shares."""
    return rf"{word}\w*(_ratio|_rate|_frac)$", rf"{word}\w*$"


PATTERNS: dict[str, tuple[str, ...]] = {
    S.H_KL: (rf"^actor/({POLICY_KL_WORDS})$", rf"^actor/{KL_LOSS_WORDS}$",
             rf"^(?!{MISMATCH_PREFIXES})(.*/)?kl$",
             rf"(^|/)({POLICY_KL_WORDS}|{KL_LOSS_WORDS})$"),
    # KL to the frozen reference: the KL loss term, or the KL verl puts in the reward
    S.H_REF_KL: (rf"^actor/{KL_LOSS_WORDS}$", r"^critic/kl$", rf"(^|/){KL_LOSS_WORDS}$",
                 r"(^|/)(ref_kl|kl_ref|kl_to_ref)(/mean)?$"),
    # train-inference mismatch: verl's rollout correction (rollout_corr/, earlier
    # mismatch/), prime-rl's mismatch_kl, slime's logprob difference, older verl's probs diff
    S.H_MISMATCH_KL: (r"^rollout_corr/k3_kl$", r"^rollout_corr/kl$",
                      r"^mismatch/mismatch_k3_kl$", r"^mismatch/mismatch_kl$",
                      r"(^|/)mismatch_kl(/mean|_mean)?$",
                      r"train_rollout_logprob_abs_diff$", r"rollout_probs_diff_mean$"),
    S.H_IS_RATIO: (r"^(rollout_corr|mismatch)/rollout_is_mean$",
                   r"(^|/)(importance_ratio|is_ratio)(/mean|_mean)?$"),
    IS_SHARE_HIGH: (r"(^|/)rollout_is_ratio_fraction_high$",),
    IS_SHARE_LOW: (r"(^|/)rollout_is_ratio_fraction_low$",),
    S.H_GRAD_NORM: (rf"^actor/{GRAD_NORM_WORDS}$", rf"actor_{GRAD_NORM_WORDS}$",
                    rf"{GRAD_NORM_WORDS}$"),
    S.H_ENTROPY: (r"^actor/entropy(_loss)?$", r"(^|/)entropy(_loss|_mean|/mean)?$"),
    S.H_REWARD: (r"^critic/(score|rewards)/mean$", r"(^|/)(reward|score)s?(/mean)?$"),
    S.H_LENGTH: (r"^response_length/mean$", r"response_length.*mean$", r"(^|/)response_length$",
                 r"^completions/mean_length$"),
    S.H_TOKENS: (r"(total_num_tokens|num_tokens|tokens/total|total_tokens)$",),
    S.H_TRUNCATION: (rf"(^|/){TRUNCATED_RESPONSES}$", *_ratio_first("truncat")),
    S.H_ABORT: _ratio_first("abort"),
    S.H_TIMEOUT: _ratio_first("timeout"),
    CLIP_FRACTION: (r"^actor/(pg_clipfrac|ppo_ratio_clipfrac|clipfrac|clip_frac)$",
                    r"(^|/)(ppo_clip_ratio|policy_clip_?frac|pg_clipfrac|clipfrac)$",
                    r"(?<!vf_)clipfrac"),  # a value-function clip fraction is the critic's
    THROUGHPUT: (r"^perf/throughput$", rf"(^|/|_)({THROUGHPUT_WORDS})$"),
}
# the health signals read from the trainer's metrics (loaders.health.signals)
SIGNALS = (S.H_KL, S.H_GRAD_NORM, S.H_ENTROPY, S.H_REWARD, S.H_LENGTH, S.H_TOKENS,
           S.H_TRUNCATION, S.H_ABORT, S.H_TIMEOUT, S.H_REF_KL, S.H_MISMATCH_KL, S.H_IS_RATIO)
# per-sample summary columns (the mean of a token array the trainer dumped) behind a health
# signal when the metrics have none: entropy, and the train-inference mismatch that
# prime-rl's and token-id formats write per token
DUMP_TOKEN_MEANS = {S.H_ENTROPY: S.extra_array_mean("entropy"),
                    S.H_MISMATCH_KL: S.extra_array_mean("mismatch_kl"),
                    S.H_IS_RATIO: S.extra_array_mean("importance_ratio")}

# ---- memory --------------------------------------------------------------------------------
MEMORY = r"memory|mem/"
MEMORY_KINDS = (("total", r"total|capacity"), ("reserved", r"reserved"),
                ("max", r"max|peak"), ("allocated", r"alloc"))  # first match wins
# peak "max" figures stand in for allocated memory when a trainer logs only those
MEMORY_SIGNALS = {S.H_MEM_RESERVED: ("reserved",), S.H_MEM_ALLOCATED: ("allocated", "max"),
                  S.H_MEM_TOTAL: ("total",)}
DEVICE = r"(?:gpu|device|dev|cuda|rank)[_:/-]?(\d+)"

# ---- stage times: (label, pattern on the part after the prefix), in pipeline order --------
STAGES = (
    ("rollout / generation", r"gen|rollout|generate|sampl"),
    ("reward", r"reward|score"),
    ("ref / old logprob", r"ref|old_log_prob|logprob"),
    ("values", r"value"),
    ("advantages", r"adv"),
    ("actor update", r"update_actor|actor|policy_train|train_step|step_train|forward_backward"),
    ("critic update", r"update_critic|critic"),
    ("checkpoint", r"save|checkpoint|ckpt|testing"),
)
OTHER_STAGE = "other"
# worker-level ".../total" timers repeat a pipeline-level stage, so they count as totals
_WHOLE_STEP = rf"(^|/)({WHOLE_STEP_WORDS})(_time)?$"


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def metric_for(names: Iterable[str], kind: str) -> str | None:
    """The metric carrying a kind (a health signal, CLIP_FRACTION, THROUGHPUT), if logged:
    the shortest name under the most specific pattern that matches any."""
    candidates = list(names)
    for pattern in PATTERNS[kind]:
        found = [n for n in candidates if _regex(pattern).search(n)]
        if found:
            return min(found, key=len)
    return None


def clip_fraction_column(names: Iterable[str]) -> str | None:
    """The policy's clip fraction (the share of tokens whose ratio was clipped)."""
    return metric_for(names, CLIP_FRACTION)


def is_memory(name: str) -> bool:
    return _regex(MEMORY).search(name) is not None


def memory_kind(name: str) -> str | None:
    """allocated / reserved / max / total for a memory metric, else None."""
    if not is_memory(name):
        return None
    return next((kind for kind, pattern in MEMORY_KINDS if _regex(pattern).search(name)), None)


def memory_device(name: str) -> int | None:
    """The device index of a per-device memory metric (gpu0, device_1, cuda:2, rank3)."""
    match = _regex(DEVICE).search(name) if is_memory(name) else None
    return int(match.group(1)) if match else None


def is_stage_timer(name: str) -> bool:
    """A per-stage timer: under a stage-time prefix and not the whole step's time."""
    return bool(_regex(STAGE_TIME).search(name)) and not _regex(_WHOLE_STEP).search(name)


def stage_columns(names: Iterable[str]) -> dict[str, list[str]]:
    """Stage label -> its timers, in pipeline order; timers no stage claims go to 'other'."""
    timers = [n for n in names if is_stage_timer(n)]
    out: dict[str, list[str]] = {}
    for label, pattern in STAGES:
        claimed = [n for n in timers if _regex(pattern).search(_regex(STAGE_TIME).sub("", n))]
        timers = [n for n in timers if n not in claimed]
        if claimed:
            out[label] = claimed
    if timers:
        out[OTHER_STAGE] = timers
    return out


# ---- a dump's reward components (per sample, not training metrics) ------------------------
# the parts a trainer's reward is made of, as columns of its dump: TRL's reward functions
# (`accuracy_reward`, `format_reward`), verl's reward_extra_info (`acc`, `format_reward`),
# slime's and verifiers' `reward_NAME` (a dict reward's keys)
REWARD_COMPONENT = (r"^reward_.+", r".+_reward$", r"^(acc|accuracy)$")
# columns that look like parts but are the whole reward, another sample's, or the board's own
NOT_COMPONENTS = frozenset({S.REF_REWARD, S.VALID_REWARD, S.REF_VALID_REWARD, S.REWARD_GAP,
                            "verl_reward", "final_reward", "raw_reward", "total_reward",
                            "train_reward"})


def reward_components(names: Iterable[str]) -> list[str]:
    """The columns among names that are parts of the reward, in their order."""
    return [n for n in names if n not in NOT_COMPONENTS and n not in S.BOARD_COLUMNS
            and any(_regex(p).search(n) for p in REWARD_COMPONENT)]
