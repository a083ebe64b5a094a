"""Metric glossary: explanations for verl / ROLL metric names and their display groups."""
import pytest

from pages.figures import glossary as G

# (metric name as logged, a word its explanation must contain)
KNOWN = [
    ("critic/score/mean", "reward"), ("critic/score/max", "reward"),
    ("critic/rewards/mean", "reward"), ("reward/r_fmt_mean", "reward"),
    ("critic/advantages/mean", "advantage"), ("critic/returns/min", "return"),
    ("critic/values/mean", "critic"), ("critic/vf_loss", "value"),
    ("critic/vf_clipfrac", "clipped"), ("critic/vf_explained_var", "variance"),
    ("critic/loss", "value"), ("critic/kl", "kl"), ("critic/kl_coeff", "kl"),
    ("critic/reward_clip_frac", "rewards clipped"),
    ("actor/pg_clipfrac", "clipped"), ("actor/pg_clipfrac_lower", "dual-clip"),
    ("actor/ppo_ratio_high_clipfrac", "1+ε"), ("actor/ppo_ratio_low_clipfrac", "1−ε"),
    ("actor/ppo_ratio_clipfrac", "clipped"), ("actor/clip_ratio_high", "1+ε"),
    ("actor/ppo_ratio_high_clipfrac@sum", "1+ε"), ("actor/ratio_mean", "ratio"),
    ("actor/kl_loss", "reference"), ("actor/kl_coef", "penalty"),
    ("actor/ppo_kl", "update"), ("actor/approxkl", "update"), ("actor/policykl", "update"),
    ("actor/entropy", "entropy"), ("actor/entropy_loss", "entropy"),
    ("critic/entropy/mean", "entropy"), ("actor/grad_norm", "gradient"),
    ("critic/grad_norm", "gradient"), ("actor/pg_loss", "policy-gradient"),
    ("actor/total_loss", "loss"), ("actor/sft_loss", "supervised"),
    ("actor/nll_loss", "supervised"), ("actor/lr", "learning rate"),
    ("critic/lr", "learning rate"),
    ("response_length/mean", "response length"), ("response_length/max", "response length"),
    ("tokens/response_length/mean", "response length"), ("prompt_length/mean", "prompt length"),
    ("tokens/prompt_length/max", "prompt length"),
    ("response_length/clip_ratio", "maximum response length"),
    ("prompt_length/clip_ratio", "maximum prompt length"),
    ("perf/throughput", "per second"), ("system/tps", "per second"),
    ("perf/mfu/actor", "flops"), ("perf/total_num_tokens", "tokens"),
    ("timing_s/gen", "generating"), ("time/step_generate", "generating"),
    ("time/rollout", "generating"), ("timing_s/reward", "scoring"),
    ("timing_s/old_log_prob", "log-probs"), ("timing_s/ref", "reference"),
    ("timing_s/values", "critic"), ("timing_s/adv", "advantages"),
    ("timing_s/update_actor", "training the actor"),
    ("timing_s/update_critic", "training the critic"),
    ("time/actor_train/train_step/total", "training the actor"),
    ("time/critic/train_step/total", "training the critic"),
    ("timing_s/save_checkpoint", "checkpoint"), ("time/actor_train/do_checkpoint/total",
                                                 "checkpoint"),
    ("timing_s/testing", "validation"), ("timing_s/step", "whole step"),
    ("time/step_total", "whole step"), ("time/actor_train/model_update/total", "weights"),
    ("time/actor_infer/generate/onload", "onload"), ("timing_per_token_ms/gen", "per token"),
    ("perf/max_memory_allocated_gb", "peak gpu memory"),
    ("perf/max_memory_reserved_gb", "peak gpu memory"), ("memory/max_allocated", "peak"),
    ("memory/actor_train/train_step/start/offload/allocated/0", "offload"),
    ("memory/actor_infer/generate/end/onload/max_reserved_frac/3", "fraction"),
    ("memory/actor_infer/generate/end/onload/reserved/1", "onload"),
    ("memory/cpu/actor_train/train_step/end/rss", "resident"),
    ("memory/cpu/actor_train/train_step/start/vms", "virtual"),
    ("system/cpu_rss", "resident"), ("perf/cpu_memory_used_gb", "host"),
    ("val/score/mean", "validation"), ("val-core/openai/gsm8k/reward/mean@1", "validation"),
]


@pytest.mark.parametrize(("name", "word"), KNOWN)
def test_known_names_are_explained(name, word):
    text = G.explain(name)
    assert isinstance(text, str) and len(text) > 20
    assert word.lower() in text.lower(), text


@pytest.mark.parametrize("name", ["loss_of_something_else", "foo/bar", "custom/my_metric",
                                  "", "step_count"])
def test_unknown_names_are_none(name):
    assert G.explain(name) is None


def test_matching_is_case_insensitive():
    assert G.explain("Actor/PG_ClipFrac") == G.explain("actor/pg_clipfrac") is not None
    assert G.explain("TIMING_S/GEN") == G.explain("timing_s/gen") is not None


def test_statistic_and_device_suffixes_share_an_entry():
    assert G.explain("critic/score/mean") == G.explain("critic/score/min")
    assert G.explain("actor/entropy_mean") == G.explain("actor/entropy")
    assert (G.explain("memory/a/b/end/onload/allocated/0")
            == G.explain("memory/a/b/end/onload/allocated/7"))


def test_closely_named_metrics_get_distinct_texts():
    texts = {G.explain(n) for n in ["actor/pg_clipfrac", "actor/pg_clipfrac_lower",
                                    "actor/ppo_ratio_high_clipfrac",
                                    "actor/ppo_ratio_low_clipfrac", "critic/vf_clipfrac",
                                    "response_length/clip_ratio"]}
    assert len(texts) == 6
    assert G.explain("actor/kl_loss") != G.explain("actor/ppo_kl") != G.explain("actor/kl_coef")
    assert G.explain("critic/score/mean") != G.explain("critic/rewards/mean")


def test_stage_names_win_over_generic_words():
    # timing names mention "reward"/"values", but are times, not rewards or values
    assert G.explain("timing_s/reward").startswith("Seconds")
    assert G.explain("time/old_log_probs_values").startswith("Seconds")
    assert G.explain("time/some_new_stage").startswith("Seconds")


def test_memory_phase_is_explained_only_for_onload_offload():
    assert "onload" in G.explain("memory/x/y/start/onload/allocated/0")
    assert "onload" not in G.explain("perf/max_memory_allocated_gb")


def test_validation_prefix_adds_the_inner_explanation():
    inner = G.explain("critic/score/mean")
    text = G.explain("val/score/mean")
    assert text.startswith(G.VAL_TEXT) and text.endswith(inner)
    assert G.explain("val/something_unknown") == G.VAL_TEXT


@pytest.mark.parametrize(("name", "group"), [
    ("time/step_generate", "timing"), ("timing_s/gen", "timing"),
    ("timing_per_token_ms/gen", "timing"), ("system/tps", "perf & system"),
    ("perf/throughput", "perf & system"), ("memory/cpu/x/start/rss", "memory"),
    ("actor/entropy", "actor"), ("critic/score/mean", "critic"), ("val/score/mean", "val"),
    ("val-core/openai/gsm8k/reward/mean@1", "val"), ("tokens/response_length/mean", "tokens"),
    ("response_length/mean", "response_length"), ("prompt_length/clip_ratio", "prompt_length"),
    ("Actor/LR", "actor"), ("training/global_step", "training"), ("loss", "other"),
    ("epoch", "other"), ("/leading", "other"),
])
def test_group_of(name, group):
    assert G.group_of(name) == group


def test_group_order_is_unique_and_covers_aliases():
    assert len(set(G.GROUP_ORDER)) == len(G.GROUP_ORDER)
    for group in ["timing", "perf & system", "memory", "actor", "critic", "val", "tokens",
                  "response_length", "prompt_length"]:
        assert group in G.GROUP_ORDER
    assert G.GROUP_ORDER[-1] == G.OTHER
