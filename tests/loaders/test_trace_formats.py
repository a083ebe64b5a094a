"""Tinker cookbook rollout summaries and open-instruct saved traces, through the loaders."""
import json

import numpy as np
import pytest
import trace_dumps as D

from loaders import open_run
from loaders import schema as S
from loaders.serve.decided import decided


def _rows(run):
    return run.with_previews(run.samples).set_index(S.KEY)


def test_tinker_summaries_one_sample_a_trajectory_with_its_stop_reason(tmp_path):
    run = open_run(D.tinker_run(tmp_path / "t"), use_cache=False)
    assert set(run.formats.values()) == {"tinker"} and run.problems == []
    rows = _rows(run)
    first = rows.loc["iteration_000001/train_rollout_summaries.jsonl:1"]
    assert (first[S.STEP], first[S.REWARD], first["final_reward"]) == (1, 1.0, 1.0)
    assert first[S.GROUP_SOURCE] == "group_id" and first["env_steps"] == 2
    assert first["action_tokens"] == 42 and first["policy_lag"] == 1
    assert first["metric_turns"] == 2 and first["tags"] == "gsm8k, tools"
    # max_tokens is a cut, said by the dump; no length cap is guessed (no tokens at all)
    cut = rows.loc["iteration_000001/train_rollout_summaries.jsonl:4"]
    assert cut[S.TRUNCATED] and cut["tinker_stop_reason"] == "max_tokens"
    assert rows[S.TRUNCATED].sum() == 2 and not rows[S.TRUNCATION_INFERRED].any()
    evals = rows[rows[S.VALIDATION]]
    assert evals.index.tolist() == ["iteration_000001/eval_gsm8k_rollout_summaries.jsonl:1"]
    assert run.steps == [0, 1]
    assert len(run.notes) == 1 and "hold no prompt or response text" in run.notes[0]


def test_open_instruct_traces_tokens_logprobs_and_finish_reasons(tmp_path):
    root = D.open_instruct_run(tmp_path / "o")
    run = open_run(root, use_cache=False)
    # the run's metadata file beside the shard is not a dump, and no problem either
    assert run.formats == {"grpo_run_rollouts_000000.jsonl": "open_instruct"}
    assert run.problems == []
    rows = _rows(run)
    assert len(rows) == 8 and run.steps == [1, 2]
    second = rows.loc["grpo_run_rollouts_000000.jsonl:2"]
    assert (second[S.RESPONSE_LEN], second[S.REWARD], second["advantage"]) == (5, 1.0, 1.0)
    assert second[S.GROUP_SOURCE] == "group_id" and second["data_source"] == "gsm8k"
    assert second["num_calls"] == 1 and second[S.GROUND_TRUTH] == "42"
    # "length" is the one cut; every response that says "stop" is not, whatever its length
    assert rows[S.TRUNCATED].tolist() == [False, False, False, True] * 2
    assert not rows[S.TRUNCATION_INFERRED].any()
    tokens = run.sample("grpo_run_rollouts_000000.jsonl:2").tokens
    assert tokens[S.TOKEN].tolist() == ["100", "101", "102", "103", "104"]
    texts = run.sample("grpo_run_rollouts_000000.jsonl:2").texts  # ids stand for the texts
    assert (texts[S.PROMPT], texts[S.RESPONSE]) == ("1 2 3 10", "100 101 102 103 104")
    assert run.notes == []
    np.testing.assert_allclose(tokens[S.LOGPROB], [-0.1, -0.2, -0.3, -0.4, -0.5])
    # the same prompt's answers share a prompt across steps: its token ids name it
    assert rows[S.PROMPT_ID].nunique() == 2


def test_a_metadata_file_without_its_shard_is_still_reported(tmp_path):
    """Only open-instruct's own layout hides it: a lone *_metadata.jsonl is a file to name."""
    (tmp_path / "run_metadata.jsonl").write_text(json.dumps({"run_name": "x"}) + "\n")
    D.open_instruct_run(tmp_path / "o")
    run = open_run(tmp_path, use_cache=False)
    assert "run_metadata.jsonl" in run.formats and "o/grpo_run_metadata.jsonl" not in run.formats


@pytest.mark.parametrize("write, fields", [(D.tinker_run, ["stop_reason"]),
                                           (D.open_instruct_run, ["finish_reason"])])
def test_the_cli_names_the_field_that_decided_truncation(tmp_path, write, fields):
    run = open_run(write(tmp_path / "d"), use_cache=False)
    for facts in decided(run).values():
        if facts["samples"]:
            assert facts["truncation"] == fields and facts["group"] == ["group_id"]
