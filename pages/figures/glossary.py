"""Short explanations of the standard verl / ROLL metric names, and their display groups.

Names are matched by case-insensitive patterns after normalisation: a trailing device id
(`/0`), `@k` suffixes and a trailing statistic (`/mean`, `_max`, ...) are dropped, so
`critic/score/mean`, `tokens/response_length/max` and `memory/x/end/onload/allocated/3`
all find their entry. Entries are tried in order: the first pattern that matches wins.
"""
from __future__ import annotations

import re

from loaders import metric_names as N

OTHER = "other"
GROUP_ORDER = ("critic", "reward", "actor", "val", "response_length", "prompt_length", "tokens",
               "timing", "perf & system", "memory", OTHER)
_ALIASES = {**dict.fromkeys(N.STAGE_TIME_PREFIXES, "timing"), "timing_per_token_ms": "timing",
            "system": "perf & system", "perf": "perf & system", "memory": "memory",
            "val-core": "val", "val-aux": "val", "validation": "val"}

_SUFFIX = re.compile(r"(?:@\w+)|(?:/\d+$)")
_STAT = re.compile(r"[/_](?:mean|max|min|std)$")
_VAL = re.compile(r"^(?:val|val-core|val-aux|validation)(?:/|$)")
_PHASE = re.compile(r"(?<![a-z])(?:onload|offload)(?![a-z])")
_T = N.STAGE_TIME + ".*"  # a stage time; the entries below name the stage


def _w(word: str) -> str:
    """A word bounded by anything but letters, so `_` and `/` separate words."""
    return rf"(?<![a-z])(?:{word})(?![a-z])"


VAL_TEXT = ("Measured on the held-out validation set without a training update, so it shows "
            "generalisation; compare it with the training curve.")
_MEMORY_PHASE = (" ROLL snapshots it around each stage: 'onload' while the model states sit on "
                 "the GPU, 'offload' after they were moved away, where a high value hints at "
                 "memory that was not released.")

_ENTRIES: tuple[tuple[str, str], ...] = (
    # ---- stage times -------------------------------------------------------------------
    (r"^timing_per_token_ms/", "Milliseconds per token spent in this stage: the stage time "
     "divided by the tokens it processed, so it stays comparable as responses grow."),
    (_T + _w("onload|offload"), "Seconds spent moving model/optimizer states onto (onload) or "
     "off (offload) the GPU around a stage; large values mean the swapping of colocated "
     "workers dominates the step."),
    (_T + _w("model_update|sync_weights|update_weights"), "Seconds spent pushing the new "
     "weights from the trainer to the inference engine after the update."),
    (_T + _w("save_checkpoint|do_checkpoint|checkpoint"), "Seconds spent writing a checkpoint; "
     "spikes at save steps are expected."),
    (_T + _w("testing|validate|validation|eval"), "Seconds spent running validation."),
    (_T + _w("gen|generate|generation|rollout"), "Seconds spent generating responses (the "
     "rollout); usually the largest share of a step and it grows with response length."),
    (_T + _w("ref|old_log_prob|old_log_probs|log_probs?|ref_log_probs?"), "Seconds spent "
     "recomputing log-probs of the responses under the old policy and/or the frozen reference "
     "model, needed for the PPO ratio and the KL terms."),
    (_T + _w("reward|rewards|compute_rewards"), "Seconds spent scoring the responses with the "
     "reward model or reward function; watch it when rewards call slow external checkers."),
    (_T + _w("values?|compute_values"), "Seconds spent running the critic over the batch to "
     "estimate values."),
    (_T + _w("adv"), "Seconds spent computing advantages; normally tiny, growth hints at a "
     "CPU-side bottleneck."),
    (_T + r"(?:update_critic|critic_train|critic/train)", "Seconds spent training the critic "
     "in this step."),
    (_T + _w("update_actor|actor_train|train_step|train"), "Seconds spent training the actor "
     "(forward, backward and optimizer steps) in this step."),
    (_T + _w(N.WHOLE_STEP_WORDS), "Wall-clock seconds of the whole step: all stages plus "
     "overhead. When it rises, compare the stage times to find the one that slowed down."),
    (_T, "Seconds spent in this stage of the training step."),
    # ---- memory, throughput, system ----------------------------------------------------
    (_w("rss"), "Resident (physical) CPU memory of the process. Steady growth across steps "
     "points at a host-memory leak, e.g. buffers kept from earlier rollouts."),
    (_w("vms"), "Virtual memory size of the process; usually far above RSS and mostly harmless, "
     "only a steady climb is worth a look."),
    (r"cpu_mem", "Host (CPU) memory in use; steady growth points at a host-memory leak."),
    (r"(?:max_allocated|max_reserved)_frac", "Peak GPU memory as a fraction of the device's "
     "capacity; close to 1 leaves little headroom before an out-of-memory error."),
    (r"max_memory_allocated|max_allocated", "Peak GPU memory held by live tensors (per device). "
     "Close to the card's capacity means the next longer batch may run out of memory."),
    (r"max_memory_reserved|max_reserved", "Peak GPU memory reserved by PyTorch's caching "
     "allocator (tensors plus cache); it is what the driver sees as used."),
    (r"allocated", "GPU memory held by live tensors at this moment (per device)."),
    (r"reserved", "GPU memory reserved by PyTorch's caching allocator at this moment; a large "
     "gap over 'allocated' is cache or fragmentation."),
    (_w("mfu"), "Model FLOPs utilisation: achieved FLOPs as a share of the hardware peak; "
     "higher means the GPUs are kept busier."),
    (_w(N.THROUGHPUT_WORDS), "Tokens processed per second (per GPU in verl's perf/throughput): "
     "the end-to-end speed of training; drops point at a slower stage or longer, more padded "
     "batches."),
    (_w("total_num_tokens"), "Tokens (prompt and response) processed in this step."),
    (_w("time_per_step"), "Wall-clock seconds of the whole training step."),
    # ---- lengths -----------------------------------------------------------------------
    (N.TRUNCATED_RESPONSES, "Share of responses cut off at the maximum response length. Rising "
     "values mean truncated answers and a reward that penalises them."),
    (r"prompt_length\w*/clip_ratio", "Share of prompts that reached the maximum prompt length "
     "and were cut; should stay near zero."),
    (_w("response_length|response_len"), "Response length in tokens over the batch. Watch for "
     "steady growth (verbosity, or longer reasoning) or a collapse; a max at the limit means "
     "truncation."),
    (_w("prompt_length|prompt_len"), "Prompt length in tokens over the batch; stays flat unless "
     "the data mix changes."),
    # ---- policy update -----------------------------------------------------------------
    (_w("reward_clip_frac"), "Share of rewards clipped to the allowed range; if high, revisit "
     "the reward scale or the clip bounds."),
    (_w("pg_clipfrac_lower"), "Share of tokens where the dual-clip lower bound (for negative "
     "advantages) capped the loss; should stay near zero."),
    (_w("ppo_ratio_high_clipfrac|clipfrac_high|clip_ratio_high|clip_ratio/high"), "Share of "
     "tokens whose probability ratio went above 1+ε and was clipped (the clip-higher side)."),
    (_w("ppo_ratio_low_clipfrac|clipfrac_low|clip_ratio_low|clip_ratio/low"), "Share of tokens "
     "whose probability ratio went below 1−ε and was clipped."),
    (_w("vf_clipfrac") + "|^critic/clipfrac", "Share of value predictions clipped to stay near "
     "the old values; high values mean the critic wants to move faster than allowed."),
    (_w(N.CLIP_FRACTION_WORDS), "Share of tokens whose new/old probability ratio left [1−ε, 1+ε] "
     "and was clipped. A few percent is normal; a climb means updates are too large (lower the "
     "lr or do fewer PPO epochs)."),
    (r"(?:^|/)ratio$", "The new/old policy probability ratio over tokens; it should stay close "
     "to 1, far from 1 means the data is increasingly off-policy."),
    (_w("kl_coef|kl_coeff|kl_ctrl"), "Weight of the KL penalty, fixed or adapted toward a target "
     "KL; an adaptive coefficient that keeps climbing means the KL overshoots its target."),
    (_w(N.KL_LOSS_WORDS), "KL between the current policy and the frozen reference model, used as "
     "a loss term. Slow growth is expected; sudden jumps often come before a collapse."),
    (_w(N.POLICY_KL_WORDS), "Estimated KL between the policy before and after this update, i.e. "
     "the size of one step; spikes mean overly large updates."),
    (_w("kl"), "KL between the policy and the reference, here applied as a penalty on the "
     "reward; it should grow slowly, a jump means the policy is leaving the reference fast."),
    (_w("entropy_loss"), "The entropy term of the loss (the policy's mean per-token entropy); "
     "a fast fall is entropy collapse, a rise with garbled text means the policy got noisy."),
    (_w("entropy"), "Mean per-token entropy of the policy. A fast fall means the policy turns "
     "deterministic and stops exploring; a sharp rise often comes with degenerate text."),
    (_w(N.GRAD_NORM_WORDS), "Gradient norm before clipping. Spikes flag unstable batches; values "
     "always above the clip threshold mean every update is being clipped."),
    (_w("pg_loss|policy_loss|weighted_pg_loss"), "Policy-gradient (clipped surrogate) loss. It is "
     "not a quality score and hovers near zero with normalised advantages; watch for spikes."),
    (_w("total_loss"), "The loss actually back-propagated: policy loss plus the weighted KL "
     "and entropy terms."),
    (_w("sft_loss|nll_loss|nll|positive_sft_loss|negative_sft_loss"), "Supervised "
     "(negative log-likelihood) loss on target tokens; it should go down and stay down."),
    (_w("lr|learning_rate"), "Learning rate used at this step; check that warmup and decay "
     "follow the configured schedule."),
    # ---- critic, rewards ---------------------------------------------------------------
    (_w("vf_loss") + "|^critic/loss$", "Value-function loss: how far the critic's predictions "
     "are from the returns. It should fall then flatten; growth means the critic lags behind."),
    (_w("vf_explained_var"), "Share of the returns' variance the critic explains: 1 is perfect, "
     "0 or below is no better than a constant."),
    (_w("vpred"), "Mean value predicted by the critic during its update."),
    (r"^critic/error$", "Mean squared error between the critic's predictions and the returns."),
    (_w("values?"), "The critic's estimate of the expected return; it should follow the "
     "returns, a drift away from them means the critic is poorly fitted."),
    (_w("advantages?|adv"), "Advantage estimates: how much better a response (token) did than "
     "expected. Normalised ones sit near 0; a spread shrinking to 0 means no learning signal."),
    (_w("returns?"), "Return targets (reward-to-go) the critic learns; with outcome rewards "
     "they track the score."),
    (_w("ref_log_prob|old_log_prob|log_prob|logprob"), "Mean log-probability of the responses "
     "under this model; the gap between policy and reference is what the KL terms measure."),
    (_w("score|acc|accuracy"), "Raw reward from the reward function or model, before any KL "
     "penalty or normalisation; it should rise. A sudden jump can be reward hacking."),
    (_w("rewards?"), "Reward per response after penalties (e.g. in-reward KL), normalisation or "
     "clipping; compare it with the raw score."),
    (_w("samples|total_samples"), "Number of samples processed."),
    (_w("global_step|epoch"), "Training progress counter."),
)
_COMPILED = tuple((re.compile(p), text) for p, text in _ENTRIES)


def _normalise(name: str) -> str:
    key = _SUFFIX.sub("", name.strip().lower())
    return _STAT.sub("", key)


def _lookup(key: str) -> str | None:
    for pattern, text in _COMPILED:
        if pattern.search(key):
            if key.startswith("memory/") and _PHASE.search(key):
                return text + _MEMORY_PHASE
            return text
    return None


def explain(name: str) -> str | None:
    """What a metric is and what to watch for, or None when the name is not known."""
    key = _normalise(name)
    if match := _VAL.match(key):
        inner = _lookup(key[match.end():])
        return f"{VAL_TEXT} {inner}" if inner else VAL_TEXT
    return _lookup(key)


def group_of(name: str) -> str:
    """The display group: the first path segment, with aliases such as time/timing_s merged."""
    if "/" not in name:
        return OTHER
    first = name.strip().split("/", 1)[0].lower()
    return _ALIASES.get(first, first) or OTHER
