"""Multi-turn samples: conversation columns, and masked tokens left out of every statistic."""
import math

import conversation_fixtures as C
import numpy as np
import pytest
from dump_files import keyed

from loaders import open_run
from loaders import schema as S
from loaders.parse import conversation, trained_tokens


def _run(tmp_path):
    return open_run(C.native_agent(tmp_path / "agent"), use_cache=False)


def test_summary_columns_of_a_conversation(tmp_path):
    run = _run(tmp_path)
    rows = run.with_previews(run.samples).set_index(S.KEY)
    row = rows.loc["rollout_data_rank0.jsonl:1"]
    assert (row[S.TURNS], row[S.TOOL_CALLS], row[S.TOOL_ERRORS]) == (5, 1, 0)
    assert row[S.TOOL_NAMES] == "python" and row[S.LAST_FINISH] == "stop"
    assert row[S.TRAINED_SHARE] == 0.6
    assert rows.loc["rollout_data_rank0.jsonl:4", S.TOOL_ERRORS] == 1
    assert rows.loc["rollout_data_rank0.jsonl:3", S.TOOL_NAMES] == "search"
    single = rows.loc["rollout_data_rank0.jsonl:9"]
    assert math.isnan(single[S.TURNS]) and single[S.LAST_FINISH] == "length"
    assert single[S.RESPONSE] == "single turn" and math.isnan(single[S.TRAINED_SHARE])
    # the texts come from the conversation when the sample has no prompt/response keys
    assert row[S.PROMPT].startswith("[system] You are a solver.")
    assert row[S.RESPONSE].startswith("[assistant] <think>let me run code</think>")


def test_masked_tokens_with_extreme_values_enter_no_statistic(tmp_path):
    run = _run(tmp_path)
    rows = keyed(run)
    conv = rows[rows[S.TURNS].notna()]
    assert (conv[S.RESPONSE_LEN] == 6).all()  # trained tokens only
    np.testing.assert_allclose(conv[S.LOG_RATIO_MEAN], 0.1)
    np.testing.assert_allclose(conv[S.LOG_RATIO_SUM], 0.6)
    np.testing.assert_allclose(conv[S.kl_mean(S.K3)], math.exp(-0.1) - 1 + 0.1)
    np.testing.assert_allclose(conv[S.VALUE_MEAN], 0.5)
    np.testing.assert_allclose(conv[S.TOKEN_REWARD_SUM], 0.0)
    np.testing.assert_allclose(conv["entropy_mean"], 0.25)
    assert (conv[S.NAN_COUNT] == 0).all()
    stats = run.step_stats
    assert stats[S.stat(S.LOG_RATIO_MEAN, "max")].max() < 1


def test_token_table_keeps_masked_tokens_dimmed_without_metrics(tmp_path):
    run = _run(tmp_path)
    sample = run.sample("rollout_data_rank0.jsonl:1")
    tokens = sample.tokens
    assert len(tokens) == 10 and tokens[S.TRAINED].tolist() == [True] * 3 + [False] * 4 + [True] * 3
    assert tokens[S.TURN].tolist() == [2, 2, 2, 3, 3, 3, 3, 4, 4, 4]
    masked = tokens[~tokens[S.TRAINED]]
    for column in (S.LOGPROB, S.LOG_RATIO, S.K3, S.VALUE, "entropy"):
        assert masked[column].isna().all(), column
    assert tokens[S.LOG_RATIO].max() < 1
    assert [t["role"] for t in sample.turns] == ["system", "user", "assistant", "tool",
                                                 "assistant"]
    assert sample.turns[2]["tool_calls"][0]["name"] == "python"


def test_turns_read_the_layouts_trainers_write():
    flat = conversation.turn_of({"role": "assistant", "content": [
        {"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        "tool_calls": [{"id": "1", "name": "f", "arguments": {"x": 1}}]}, pretty_args=True)
    assert flat["text"] == "ab" and flat["tool_calls"][0] == {
        "id": "1", "name": "f", "arguments": '{"x":1}', "pretty": '{\n  "x": 1\n}'}
    odd = conversation.turn_of({"role": "<b>boss</b>", "content": None})
    assert odd["role"] == "other" and odd["raw_role"] == "<b>boss</b>" and odd["text"] == ""
    assert conversation.turn_of("just text")["role"] == "other"
    flagged = conversation.turn_of({"role": "tool", "content": "fine", "is_error": True})
    assert flagged["error"]
    assert not conversation.turn_of({"role": "assistant", "content": "Error: none"})["error"]


def test_trained_view_cuts_only_lists_as_long_as_the_mask():
    obj = {"loss_mask": [1, 0, 1], "logprobs": [1.0, 9.0, 3.0], "other": [1, 2],
           "response_tokens": np.array(["a", "b", "c"])}
    view, share, places = trained_tokens.trained_view(obj)
    assert view["logprobs"] == [1.0, 3.0] and view["other"] == [1, 2]
    assert view["response_tokens"].tolist() == ["a", "c"] and share == 2 / 3
    assert S.LOSS_MASK not in view and places.tolist() == [0, 2]
    same, nan, none = trained_tokens.trained_view({"logprobs": [1.0]})
    assert same == {"logprobs": [1.0]} and math.isnan(nan) and none is None


def test_hot_tokens_of_a_masked_sample_point_at_their_place_in_the_whole_response(tmp_path):
    from loaders.serve import token_summary

    run = _run(tmp_path)
    rows = keyed(run)
    hot = token_summary.hot_tokens(token_summary.digests(rows), S.K3, rows)
    assert len(hot)
    for key, position in zip(hot["sample"], hot["position"]):
        tokens = run.sample(key).tokens
        assert tokens[S.TRAINED].iloc[position], (key, position)  # a trained token's place


def test_masked_tokens_stay_out_of_the_health_signals(tmp_path):
    signals = _run(tmp_path).health().signals
    assert signals[S.H_TOKEN_KL].max() < 0.01  # k3 of log_ratio 0.1, not of ±1e6
    assert (signals[S.H_TOKENS].dropna() <= 8 * 6 + 1).all()  # trained tokens only


def test_odd_conversation_fields_never_cost_the_sample(tmp_path):
    from dump_files import write_dump

    odd = [
        {"messages": "not a list"},
        {"messages": [1, None, {"role": 5, "content": {"a": [1]}}, {"role": "tool"}]},
        {"messages": [{"role": "assistant", "tool_calls": "x"},
                      {"role": "assistant", "tool_calls": [{"function": "nope"}, 7]}]},
        {"loss_mask": "abc", "logprobs": [-1.0, -2.0]},
        {"loss_mask": [None, "x"], "logprobs": [-1.0, -2.0]},
        {"loss_mask": [1, 0, 1], "logprobs": [-1.0, -2.0], "token_turns": ["a", None]},
        {"loss_mask": [[1], [0]], "logprobs": [-1.0, -2.0]},
        {"loss_mask": [0, 0], "logprobs": [-1.0, -2.0], "ref_logprobs": [-1.0, -2.0]},
    ]
    write_dump(tmp_path / "rollout_data_rank0.jsonl",
               [{"step": 0, "prompt": "p", "reward": 1.0, **o} for o in odd])
    run = open_run(tmp_path, use_cache=False)
    assert len(run.samples) == len(odd)
    for key in keyed(run)[S.KEY]:
        sample = run.sample(key)
        assert sample.error is None, (key, sample.error)
    rows = run.with_previews(run.samples).set_index(S.KEY)
    assert rows.loc["rollout_data_rank0.jsonl:2", S.TURNS] == 4
    assert rows.loc["rollout_data_rank0.jsonl:8", S.TRAINED_SHARE] == 0
    assert rows.loc["rollout_data_rank0.jsonl:8", S.RESPONSE_LEN] == 0


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_the_reference_writer_writes_conversations_in_both_formats(tmp_path, fmt):
    from loaders.writer import DumpWriter

    writer = DumpWriter(tmp_path, rank=0, format=fmt)
    sample = C.agent_sample(3, 1)
    sample["logprobs"] = np.array(sample["logprobs"])  # what a trainer passes: arrays
    sample["loss_mask"] = np.array(sample["loss_mask"])
    writer.write(sample)
    if hasattr(writer, "close"):
        writer.close()
    run = open_run(tmp_path, use_cache=False)
    row = keyed(run).iloc[0]
    assert (row[S.TURNS], row[S.TRAINED_SHARE], row[S.RESPONSE_LEN]) == (5, 0.6, 6)
    assert row[S.LOG_RATIO_MEAN] == pytest.approx(0.1)
    assert run.sample(row[S.KEY]).turns[3]["role"] == "tool"
