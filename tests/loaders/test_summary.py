"""loaders.index.summary: one summary row per sample, checked against numpy on aligned tokens."""
import math
import sys

import numpy as np
import pytest

from loaders import schema as S
from loaders.index.summary import SummaryBatch, extra_column, finite_sum, scalar
from loaders.parse.text import text_id

WHERE = {S.FILE: "rollout_data_rank_0.jsonl", S.LINE: 1, S.RANK: 0, S.OFFSET: 0, S.NBYTES: 10}
NAN = float("nan")


def _summarize(*objs):
    """(rows, problems) for samples added in order to one batch."""
    batch, problems = SummaryBatch(), []
    for i, obj in enumerate(objs):
        batch.add(obj, {**WHERE, S.LINE: i + 1}, problems.append)
    columns = batch.finish()
    as_lists = {name: list(v.tolist() if isinstance(v, np.ndarray) else v)
                for name, v in columns.items()}
    return [dict(zip(as_lists, values)) for values in zip(*as_lists.values())], problems


def _one(obj):
    rows, problems = _summarize(obj)
    return rows[0], problems


def _sample(**overrides):
    obj = {"step": 2, "prompt": "p", "response": "r",
           "response_tokens": ["a", "b", "c", "<pad>", "<pad>"],
           "logprobs": [-0.5, -1.0, -0.25, -3.0],
           "ref_logprobs": [-0.75, -0.5, -0.25, -2.0, -9.0],
           "values": [0.1, 0.2, 0.6, 5.0],
           "token_rewards": [0.0, 0.5, 1.0, 7.0],
           "reward": 1.5, "ref_reward": 0.5}
    obj.update(overrides)
    return obj


# ---- log ratio and KL on the aligned tokens -----------------------------------------------

def test_log_ratio_and_kl_use_the_aligned_tokens():
    obj = _sample(response_tokens=["a", "b", "c"])  # shortest list has 3 tokens
    row, problems = _one(obj)
    r = np.array(obj["logprobs"][:3]) - np.array(obj["ref_logprobs"][:3])
    assert problems == []
    assert row[S.RESPONSE_LEN] == 3 and row[S.LENGTH_MISMATCH] is True
    assert row[S.LOG_RATIO_SUM] == pytest.approx(r.sum())
    assert row[S.LOG_RATIO_MEAN] == pytest.approx(r.mean())
    assert row[S.kl_sum(S.K3)] == pytest.approx(np.sum(np.exp(-r) - 1 + r))
    assert row[S.kl_mean(S.K3)] == pytest.approx(np.mean(np.exp(-r) - 1 + r))
    assert row[S.kl_sum(S.K2)] == pytest.approx(np.sum(r ** 2 / 2))
    assert row[S.kl_sum(S.K3_REVERSE)] == pytest.approx(np.sum(np.exp(r) - 1 - r))
    assert row[S.kl_sum(S.K1)] == row[S.LOG_RATIO_SUM]


def test_equal_lengths_are_not_flagged():
    row, _ = _one({"step": 0, "response_tokens": ["a", "b"], "logprobs": [-1.0, -2.0],
                   "ref_logprobs": [-1.0, -1.0]})
    assert row[S.RESPONSE_LEN] == 2 and row[S.LENGTH_MISMATCH] is False
    assert row[S.LOG_RATIO_SUM] == pytest.approx(-1.0)


def test_kl_of_several_samples_stays_per_sample():
    a = _sample(response_tokens=["x", "y"], logprobs=[-1.0, -2.0], ref_logprobs=[-1.5, -1.0])
    b = {"step": 1, "prompt": "q"}  # no tokens: no KL, must not shift the others
    c = _sample(response_tokens=["z"] * 3, logprobs=[-0.1, -0.2, -0.3],
                ref_logprobs=[-0.3, -0.2, -0.1])
    rows, _ = _summarize(a, b, c)
    assert rows[0][S.LOG_RATIO_SUM] == pytest.approx(0.5 - 1.0)
    assert math.isnan(rows[1][S.LOG_RATIO_SUM]) and math.isnan(rows[1][S.kl_mean(S.K3)])
    r = np.array([0.2, 0.0, -0.2])
    assert rows[2][S.LOG_RATIO_SUM] == pytest.approx(r.sum())
    assert rows[2][S.kl_sum(S.K3)] == pytest.approx(np.sum(np.exp(-r) - 1 + r))


def test_missing_ref_logprobs_leaves_kl_nan():
    row, problems = _one(_sample(ref_logprobs=None))
    assert problems == []
    for name in (S.LOG_RATIO_MEAN, S.LOG_RATIO_SUM, S.kl_sum(S.K3), S.kl_mean(S.K1)):
        assert math.isnan(row[name]), name


def test_nan_in_logprobs_is_counted_and_excluded_from_means():
    obj = _sample(response_tokens=["a", "b", "c", "d"], logprobs=[-0.5, NAN, -0.25, -1.0],
                  ref_logprobs=[-0.75, -0.5, -0.5, -0.5], values=None, token_rewards=None)
    row, _ = _one(obj)
    r = np.array([-0.5 + 0.75, -0.25 + 0.5, -1.0 + 0.5])  # the three finite tokens
    assert row[S.NAN_COUNT] == 1
    assert row[S.LOG_RATIO_SUM] == pytest.approx(r.sum())
    assert row[S.LOG_RATIO_MEAN] == pytest.approx(r.mean())
    assert row[S.kl_mean(S.K3)] == pytest.approx(np.mean(np.exp(-r) - 1 + r))


def test_none_in_logprobs_counts_like_nan():
    obj = _sample(response_tokens=["a", "b"], logprobs=[None, -1.0], ref_logprobs=[-1.0, -2.0],
                  values=None, token_rewards=None)
    row, problems = _one(obj)
    assert problems == []
    assert row[S.NAN_COUNT] == 1
    assert row[S.LOG_RATIO_MEAN] == pytest.approx(1.0)


def test_all_tokens_nan_gives_nan_kl():
    obj = _sample(response_tokens=["a", "b"], logprobs=[NAN, NAN], ref_logprobs=[-1.0, -2.0],
                  values=None, token_rewards=None)
    row, _ = _one(obj)
    assert row[S.NAN_COUNT] == 2
    assert math.isnan(row[S.LOG_RATIO_MEAN]) and math.isnan(row[S.LOG_RATIO_SUM])


def test_bad_logprobs_report_a_problem_and_leave_kl_nan():
    row, problems = _one(_sample(logprobs=[-1.0, "x", -1.0, -1.0]))
    assert len(problems) == 1 and problems[0].startswith("logprobs: ")
    assert math.isnan(row[S.LOG_RATIO_MEAN])
    _, problems = _one(_sample(ref_logprobs=[-1.0, -1.0, "x", -1.0]))
    assert len(problems) == 1 and problems[0].startswith("ref_logprobs: ")  # the one at fault


# ---- critic and rewards -------------------------------------------------------------------

def test_values_mean_and_token_rewards_sum_use_the_aligned_tokens():
    obj = _sample()  # aligned length 4 (logprobs, values, token_rewards)
    row, _ = _one(obj)
    assert row[S.RESPONSE_LEN] == 4
    assert row[S.VALUE_MEAN] == pytest.approx(np.mean([0.1, 0.2, 0.6, 5.0]))
    assert row[S.TOKEN_REWARD_SUM] == pytest.approx(0.0 + 0.5 + 1.0 + 7.0)

    obj = _sample(response_tokens=["a", "b"])
    row, _ = _one(obj)
    assert row[S.VALUE_MEAN] == pytest.approx(np.mean([0.1, 0.2]))
    assert row[S.TOKEN_REWARD_SUM] == pytest.approx(0.5)


def test_nan_values_are_counted_and_skipped():
    obj = _sample(response_tokens=["a", "b", "c"], values=[0.3, NAN, None],
                  token_rewards=[1.0, float("inf"), 2.0])
    row, problems = _one(obj)
    assert problems == []
    assert row[S.VALUE_MEAN] == pytest.approx(0.3)
    assert row[S.TOKEN_REWARD_SUM] == pytest.approx(3.0)
    assert row[S.NAN_COUNT] == 3


def test_missing_critic_fields_are_nan():
    row, _ = _one({"step": 1, "response_tokens": ["a"]})
    assert math.isnan(row[S.VALUE_MEAN]) and math.isnan(row[S.TOKEN_REWARD_SUM])
    assert row[S.NAN_COUNT] == 0


def test_reward_gap_is_reward_minus_ref_reward():
    row, _ = _one(_sample(reward=1.5, ref_reward=0.25))
    assert row[S.REWARD] == 1.5 and row[S.REF_REWARD] == 0.25
    assert row[S.REWARD_GAP] == pytest.approx(1.25)


def test_reward_gap_is_nan_without_ref_reward():
    row, _ = _one(_sample(ref_reward=None))
    assert math.isnan(row[S.REF_REWARD]) and math.isnan(row[S.REWARD_GAP])


def test_numeric_string_reward_is_accepted():
    row, problems = _one(_sample(reward="0.75"))
    assert problems == [] and row[S.REWARD] == 0.75


def test_bad_reward_reports_a_field_problem_and_leaves_nan():
    row, problems = _one(_sample(reward="abc"))
    assert len(problems) == 1
    assert problems[0].startswith("reward:") and "abc" in problems[0]
    assert math.isnan(row[S.REWARD]) and math.isnan(row[S.REWARD_GAP])
    assert row[S.REF_REWARD] == 0.5  # the other scalars are kept
    assert row[S.NAN_COUNT] == 0  # a value of the wrong kind is its problem, not a NaN too


def test_a_non_finite_reward_is_kept_and_counted_once():
    row, problems = _one(_sample(reward=float("inf"), ref_reward="nan"))
    assert problems == [] and row[S.REWARD] == float("inf") and math.isnan(row[S.REF_REWARD])
    assert row[S.NAN_COUNT] == 2


def test_nan_reward_is_counted():
    row, _ = _one(_sample(reward=NAN, values=None, token_rewards=None, logprobs=None))
    assert row[S.NAN_COUNT] == 1


@pytest.mark.parametrize("value, expected", [(None, NAN), (2, 2.0), (-0.5, -0.5), ("3", 3.0)])
def test_scalar(value, expected):
    got = scalar(value)
    assert (math.isnan(got) and math.isnan(expected)) or got == expected


def test_finite_sum_skips_non_finite_and_cuts_to_n():
    assert finite_sum([1.0, NAN, 2.0, None, 100.0], 4) == (3.0, 2)
    assert finite_sum([1.0, 2.0, 100.0], 2) == (3.0, 0)


# ---- location, texts and extras ----------------------------------------------------------

def test_where_and_step_are_copied():
    row, _ = _one(_sample(step=9))
    assert row[S.STEP] == 9
    for key, value in WHERE.items():
        assert row[key] == value


def test_prompt_preview_keeps_the_tail_but_chars_count_the_full_prompt():
    prompt = "x" * (S.PREVIEW_CHARS + 123) + "<endofsystem>the question"
    row, _ = _one(_sample(prompt=prompt, response="short"))
    assert len(row[S.PROMPT]) == S.PREVIEW_CHARS
    assert row[S.PROMPT].startswith("…x") and row[S.PROMPT].endswith("<endofsystem>the question")
    assert row[S.PROMPT_CHARS] == len(prompt)
    assert row[S.PROMPT_ID] == text_id(prompt)
    assert row[S.RESPONSE] == "short" and row[S.RESPONSE_CHARS] == 5


def test_chat_prompt_is_rendered_as_text():
    row, _ = _one(_sample(prompt=[{"role": "user", "content": "hi"}]))
    assert row[S.PROMPT] == "[user] hi"
    assert row[S.PROMPT_CHARS] == len("[user] hi")


def test_missing_texts_are_empty():
    row, _ = _one({"step": 0})
    assert row[S.PROMPT] == "" and row[S.REF_RESPONSE] == "" and row[S.GROUND_TRUTH] == ""
    assert row[S.REF_RESPONSE_CHARS] == 0


def test_extra_scalar_key_becomes_a_column():
    row, _ = _one(_sample(temperature=0.7, accepted=True, seed=3, note=None))
    assert row["temperature"] == 0.7
    assert row["accepted"] == 1.0
    assert row["seed"] == 3.0
    assert math.isnan(row["note"])


def test_extra_numeric_list_becomes_its_mean():
    row, problems = _one(_sample(entropy=[0.5, 1.5, NAN, 4.0]))
    assert problems == []
    assert "entropy" not in row
    assert row["entropy_mean"] == pytest.approx(np.mean([0.5, 1.5, 4.0]))


def test_extra_key_named_like_a_column_is_prefixed():
    row, _ = _one(_sample(rank=5, truncated=True))
    assert row[S.RANK] == WHERE[S.RANK]  # the location wins
    assert row["extra_rank"] == 5.0
    assert row["extra_truncated"] == 1.0
    assert extra_column("rank") == "extra_rank" and extra_column("entropy") == "entropy"


def test_extra_list_whose_mean_name_collides_is_prefixed():
    row, _ = _one(_sample(value=[1.0, 3.0]))  # value_mean is a schema column
    assert row["extra_value_mean"] == pytest.approx(2.0)
    assert row[S.VALUE_MEAN] == pytest.approx(np.mean([0.1, 0.2, 0.6, 5.0]))


def test_extra_text_is_a_preview():
    row, _ = _one(_sample(finish_reason="length", meta={"k": "v" * 1000}))
    assert row["finish_reason"] == "length"
    assert len(row["meta"]) == S.PREVIEW_CHARS and row["meta"].startswith('{"k":"vvv')


def test_every_kl_column_is_filled_for_every_row():
    rows, _ = _summarize({"step": 0}, _sample())
    for row in rows:
        for name in (S.LOG_RATIO_MEAN, S.LOG_RATIO_SUM):
            assert name in row
        for est in S.KL_ESTIMATORS:
            assert S.kl_mean(est) in row and S.kl_sum(est) in row


# ---- fields of the wrong type are problems, not crashes ---------------------------------------

def test_scalar_values_field_is_a_problem_not_a_crash():
    row, problems = _one(_sample(values=0.5))
    assert len(problems) == 1 and math.isnan(row[S.VALUE_MEAN])


def test_scalar_logprobs_field_is_a_problem_not_a_crash():
    row, problems = _one(_sample(logprobs=-0.5))
    assert len(problems) == 1 and math.isnan(row[S.LOG_RATIO_MEAN])


def test_integer_too_big_for_a_float_is_a_problem_not_a_crash():
    row, problems = _one(_sample(entropy=[10**400, 1.0]))
    assert len(problems) == 1 and "entropy" in problems[0]


def test_prompt_ids_are_kept_for_the_process_within_a_budget_of_characters(monkeypatch):
    """A dataset's prompts recur: a worker hashes each once for all its chunks, and forgets
    them all past KEPT_CHARS (a long system prompt a sample must not keep a run's texts)."""
    from loaders.index.grouping import prompt_id
    from loaders.index.text_columns import _PromptIds

    monkeypatch.setattr(_PromptIds, "KEPT_CHARS", 1000)
    known = _PromptIds()
    prompts = [f"question {i % 7} " + "x" * 90 for i in range(30)]
    assert known.of(prompts).tolist() == [prompt_id(p) for p in prompts]
    assert len(known.ids) == 7 and known.chars == 7 * len(prompts[0])
    longer = [f"other {i} " + "y" * 200 for i in range(10)]
    assert known.of(longer).tolist() == [prompt_id(p) for p in longer]
    assert len(known.ids) == 10 and known.chars == 10 * len(longer[0])  # the batch's own


def test_prompt_ids_from_many_threads_past_the_budget(monkeypatch):
    """The server scans growth on many threads: a thread that forgets the ids must not
    take away the ones another is about to read."""
    import threading

    from loaders.index.grouping import prompt_id
    from loaders.index.text_columns import _PromptIds

    monkeypatch.setattr(_PromptIds, "KEPT_CHARS", 2000)
    known, failed = _PromptIds(), []

    def scan(seed: int) -> None:
        for batch in range(200):
            prompts = [f"prompt {(seed * 7 + batch + i) % 400} " + "x" * 20 for i in range(40)]
            try:
                assert known.of(prompts).tolist() == [prompt_id(p) for p in prompts]
            except Exception as err:  # noqa: BLE001 -- any failure of a thread counts
                failed.append(err)
                return

    threads = [threading.Thread(target=scan, args=(seed,)) for seed in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch often: the race, when there is one, shows
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert failed == []  # (without _PromptIds' lock, a KeyError in one thread or more)
