"""The one table of trainer metric names, on names verl, ROLL, OpenRLHF and prime-rl log."""
import pandas as pd
import pytest

from loaders import metric_names as N
from loaders import schema as S
from loaders.health import views
from loaders.health.signals import health_signals

VERL = ["actor/ppo_kl", "actor/kl_loss", "actor/entropy", "actor/grad_norm", "critic/grad_norm",
        "actor/pg_clipfrac", "actor/pg_clipfrac_lower", "critic/vf_clipfrac",
        "critic/score/mean", "critic/rewards/mean", "response_length/mean",
        "response_length/clip_ratio", "prompt_length/clip_ratio", "perf/total_num_tokens",
        "perf/throughput", "perf/max_memory_allocated_gb", "perf/max_memory_reserved_gb",
        "timing_s/gen", "timing_s/ref", "timing_s/update_actor", "timing_s/step"]
ROLL = ["actor/approxkl", "actor/policykl", "actor/entropy_loss", "actor/pg_clipfrac",
        "actor/ppo_ratio_high_clipfrac", "critic/score/mean", "tokens/response_length/mean",
        "time/step_generate", "time/old_log_probs", "time/step_total",
        "memory/actor_train/train_step/end/onload/allocated/0", "system/tps"]
OPENRLHF = ["train/kl", "train/reward", "train/response_length", "train/entropy_loss",
            "train/critic_grad_norm", "train/actor_grad_norm", "train/ppo_clip_ratio",
            "train/policy_loss"]
PRIME_RL = ["entropy/mean", "mismatch_kl/mean", "optim/grad_norm", "perf/throughput_per_gpu",
            "perf/throughput", "perf/peak_memory", "time/step", "time/forward_backward",
            "time/save_ckpt", "time/broadcast_weights", "reward/mean"]


@pytest.mark.parametrize(("names", "kind", "expected"), [
    (VERL, S.H_KL, "actor/ppo_kl"), (VERL, S.H_ENTROPY, "actor/entropy"),
    (VERL, S.H_GRAD_NORM, "actor/grad_norm"), (VERL, S.H_REWARD, "critic/score/mean"),
    (VERL, S.H_LENGTH, "response_length/mean"), (VERL, S.H_TOKENS, "perf/total_num_tokens"),
    (VERL, S.H_TRUNCATION, "response_length/clip_ratio"),
    (VERL, N.CLIP_FRACTION, "actor/pg_clipfrac"), (VERL, N.THROUGHPUT, "perf/throughput"),
    (ROLL, S.H_KL, "actor/approxkl"), (ROLL, S.H_ENTROPY, "actor/entropy_loss"),
    (ROLL, S.H_LENGTH, "tokens/response_length/mean"),
    (ROLL, N.CLIP_FRACTION, "actor/pg_clipfrac"), (ROLL, N.THROUGHPUT, "system/tps"),
    (OPENRLHF, S.H_KL, "train/kl"), (OPENRLHF, S.H_REWARD, "train/reward"),
    (OPENRLHF, S.H_LENGTH, "train/response_length"),
    (OPENRLHF, S.H_ENTROPY, "train/entropy_loss"),
    (OPENRLHF, S.H_GRAD_NORM, "train/actor_grad_norm"),
    (OPENRLHF, N.CLIP_FRACTION, "train/ppo_clip_ratio"),
    (PRIME_RL, S.H_ENTROPY, "entropy/mean"), (PRIME_RL, S.H_GRAD_NORM, "optim/grad_norm"),
    (PRIME_RL, S.H_REWARD, "reward/mean"), (PRIME_RL, N.THROUGHPUT, "perf/throughput"),
])
def test_each_trainer_names_its_signals(names, kind, expected):
    assert N.metric_for(names, kind) == expected


@pytest.mark.parametrize(("names", "kind"), [
    (PRIME_RL, S.H_KL),  # a trainer/inference mismatch, not the policy's KL
    (VERL, S.H_ABORT), (ROLL, S.H_TIMEOUT), (PRIME_RL, N.CLIP_FRACTION),
    (["critic/vf_clipfrac"], N.CLIP_FRACTION),  # the critic's clipping, not the policy's
    (["prompt_length/clip_ratio"], S.H_TRUNCATION),
])
def test_absent_or_lookalike_metrics_are_not_taken(names, kind):
    assert N.metric_for(names, kind) is None


def test_a_ratio_wins_over_a_count_of_the_same_thing():
    names = ["rollout/aborted", "rollout/abort_ratio", "rollout/timeouts",
             "rollout/timeout_rate", "rollout/truncated", "rollout/truncated_frac"]
    assert N.metric_for(names, S.H_ABORT) == "rollout/abort_ratio"
    assert N.metric_for(names, S.H_TIMEOUT) == "rollout/timeout_rate"
    assert N.metric_for(names, S.H_TRUNCATION) == "rollout/truncated_frac"


def test_matching_ignores_case_and_every_signal_has_patterns():
    assert N.metric_for(["Actor/PPO_KL"], S.H_KL) == "Actor/PPO_KL"
    assert set(N.SIGNALS) <= set(N.PATTERNS)


@pytest.mark.parametrize(("name", "kind"), [
    ("perf/max_memory_allocated_gb", "max"), ("perf/max_memory_reserved_gb", "reserved"),
    ("perf/memory_total_gb", "total"), ("system/gpu_memory_capacity", "total"),
    ("memory/allocated_gpu0", "allocated"), ("perf/peak_memory", "max"),
    ("memory/actor_infer/generate/end/onload/max_reserved_frac/3", "reserved"),
    ("memory/cpu/actor_train/train_step/end/rss", None), ("perf/cpu_memory_used_gb", None),
    ("actor/grad_norm", None), ("timing_s/gen", None),
])
def test_memory_kind(name, kind):
    assert N.memory_kind(name) == kind


def test_memory_device_only_for_memory_metrics():
    assert N.memory_device("memory/allocated/gpu3") == 3
    assert N.memory_device("perf/reserved_memory_cuda:1") == 1
    assert N.memory_device("memory/allocated") is None
    assert N.memory_device("rank_2/grad_norm") is None


def test_stage_columns_across_trainers():
    names = VERL + ROLL + PRIME_RL
    stages = N.stage_columns(names)
    assert list(stages) == ["rollout / generation", "ref / old logprob", "actor update",
                            "checkpoint", N.OTHER_STAGE]
    assert stages["rollout / generation"] == ["timing_s/gen", "time/step_generate"]
    assert stages["ref / old logprob"] == ["timing_s/ref", "time/old_log_probs"]
    assert stages["actor update"] == ["timing_s/update_actor", "time/forward_backward"]
    assert stages["checkpoint"] == ["time/save_ckpt"]
    assert stages[N.OTHER_STAGE] == ["time/broadcast_weights"]


@pytest.mark.parametrize("name", ["timing_s/step", "time/step", "time/step_total",
                                  "timing/iteration_time", "time/actor_train/train_step/total"])
def test_whole_step_timers_are_not_stages(name):
    assert not N.is_stage_timer(name)
    assert N.stage_columns([name]) == {}


def test_clip_fraction_prefers_the_policy_over_the_critic_and_the_dual_clip_bound():
    names = ["critic/vf_clipfrac", "actor/pg_clipfrac_lower", "actor/pg_clipfrac"]
    assert N.clip_fraction_column(names) == "actor/pg_clipfrac"
    assert N.clip_fraction_column(["critic/vf_clipfrac", "custom/clipfrac_avg"]) == (
        "custom/clipfrac_avg")


def test_signals_and_the_quality_table_read_the_same_abort_column():
    index = pd.Index([0, 1], name=S.STEP)
    metrics = pd.DataFrame({"rollout/aborted": [3.0, 9.0], "rollout/abort_ratio": [0.1, 0.3]},
                           index=index)
    samples = pd.DataFrame({S.STEP: [0, 1], S.PROMPT_CHARS: [5, 6], S.RESPONSE_LEN: [2, 3],
                            S.TRUNCATED: [False, True], S.TRUNCATION_INFERRED: [False, True],
                            S.NAN_COUNT: [0, 0],
                            S.LENGTH_MISMATCH: [0, 0]})
    signal = health_signals(metrics, None)[S.H_ABORT]
    table = views.quality(samples, metrics)["aborted ratio"]
    assert signal.tolist() == table.tolist() == [0.1, 0.3]
