"""Multi-turn trainer formats, written by agent_format_fixtures, through the loaders."""
import math
import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import agent_format_fixtures as A
import numpy as np
import orjson
import pytest
import torch
import torch_dumps as T
from dump_files import keyed

from loaders import open_run
from loaders import schema as S


def _run(tmp_path, name):
    return open_run(A.ALL[name](tmp_path / name), use_cache=False)


def _rows(run):
    return run.with_previews(run.samples).set_index(S.KEY)


def test_verifiers_episodes_one_sample_per_branch_and_all_only_adds_failures(tmp_path):
    run = _run(tmp_path, "verifiers")
    assert set(run.formats.values()) == {"verifiers"}
    rows = _rows(run)
    first = rows.loc["rollouts/step_0/train/effective/traces.jsonl:1"]
    branch = rows.loc["rollouts/step_0/train/effective/traces.jsonl:1#1"]
    assert (first[S.TURNS], first[S.TOOL_CALLS], first[S.TOOL_NAMES]) == (5, 1, "search")
    assert first[S.LAST_FINISH] == "stop" and branch[S.LAST_FINISH] == "length"
    assert first[S.RESPONSE_LEN] == 5 and first[S.TRAINED_SHARE] == pytest.approx(5 / 13)
    assert first[S.REWARD] == 0.5 and first["reward_format"] == 1.0  # 0 + 1.0 * 0.5
    assert first["advantages_mean"] == 0.5 and math.isnan(first[S.LOG_RATIO_MEAN])
    assert first[S.GROUP_SOURCE] == "group_id" and not first[S.EXCLUDED]
    assert (first[S.POLICY_LAG], first[S.POLICY_SPAN]) == (0, 0)  # step 0: policy 0..0
    # the branch's calls (nodes 2 and 4) ran 100-101.5 and 103-104: 4 s, 2.5 of them model
    assert (first[S.REQUEST_S], first[S.GENERATE_S], first[S.TOOL_S]) == (4.0, 2.5, 1.5)
    assert (first[S.START_TS], first[S.FINISH_TS]) == (100.0, 104.0)
    assert (branch[S.REQUEST_S], branch[S.GENERATE_S]) == (5.0, 3.5)  # nodes 2 and 5
    later = rows.loc["rollouts/step_1/train/effective/traces.jsonl:1"]
    assert (later[S.POLICY_LAG], later[S.POLICY_SPAN]) == (1, 1)  # step 1: policy 0..1
    # `all` repeats the effective episodes: only its failed ones are read, as left out
    from_all = run.samples[run.samples[S.FILE].str.contains("/all/")]
    assert from_all[S.EXCLUDED].all() and set(from_all[S.EXCLUDED_BY]) == {"error"}
    assert len(from_all) == 6  # per step: a failed trace's two branches, a trace-less failure
    assert run.samples[S.VALIDATION].sum() == 2  # the eval episode's two branches
    sample = run.sample("rollouts/step_0/train/effective/traces.jsonl:1")
    tokens = sample.tokens
    assert tokens[S.TOKEN].tolist()[:5] == ["90", "91", "10", "11", "12"]
    np.testing.assert_allclose(tokens[S.LOGPROB].dropna(), [-0.1, -0.2, -0.3, -0.4, -0.5])
    assert tokens[S.TURN].tolist() == [2] * 5 + [3] * 4 + [4] * 4
    assert [t["role"] for t in sample.turns] == ["system", "user", "assistant", "tool",
                                                 "assistant"]
    assert sample.turns[2]["finish_reason"] == "tool_calls"
    # time per turn: the model's call 1.5 s, the tool's answer 1.5 s, the model again 1 s
    assert [t["seconds"] for t in sample.turns] == [None, None, 1.5, 1.5, 1.0]
    assert sample.texts[S.PROMPT] == "[system] Use tools.\n[user] Question 0?"


def test_verl_tool_agent_loop_dump_gets_its_turns_back_from_the_texts(tmp_path):
    run = _run(tmp_path, "verl")
    assert set(run.formats.values()) == {"verl"}
    rows = _rows(run)
    multi = rows.loc["rollout/3.jsonl:2"]
    assert (multi[S.TURNS], multi[S.TOOL_CALLS], multi[S.TOOL_ERRORS]) == (6, 1, 1)
    assert multi[S.TOOL_NAMES] == "calc" and math.isnan(multi[S.TRAINED_SHARE])
    assert math.isnan(rows.loc["rollout/3.jsonl:1", S.TURNS])  # a single-turn answer
    turns = run.sample("rollout/3.jsonl:2").turns
    assert [t["role"] for t in turns] == ["system", "user", "assistant", "tool", "tool",
                                          "assistant"]
    assert turns[0]["text"] == "You are a math agent." and turns[1]["text"] == "What is 6*7?"
    call = next(t for t in turns if t["tool_calls"])["tool_calls"][0]
    assert call["name"] == "calc" and call["pretty"] == '{\n  "expr": "6*7"\n}'
    assert [t["text"] for t in turns if t["role"] == "tool"] == [
        "42", "Error: second call timed out"]
    assert turns[-1]["text"] == "<think>fine</think>The answer is 42."
    kept = rows.loc["validation/3.jsonl:1"]
    assert kept[S.TURNS] == 2 and kept[S.VALIDATION]


def _slime(tmp_path):
    return T.slime_run(tmp_path / "slime")


def test_a_slime_rollout_and_its_train_file_are_one_sample_each(tmp_path):
    run = open_run(_slime(tmp_path), use_cache=False)
    assert set(run.formats.values()) == {"slime"} and run.problems == []
    rows = _rows(run)
    assert rows.index.tolist() == [f"rollout_data/3.pt:{i}" for i in range(1, 5)]
    first = rows.loc["rollout_data/3.pt:1"]
    assert first[S.STEP] == 3 and first[S.TURNS] == 3 and first[S.TRAINED_SHARE] == 5 / 8
    assert first[S.REWARD] == 0.0 and first["reward_fmt"] == 1.0
    assert first[S.GROUND_TRUTH] == "far" and first[S.GROUP_SOURCE] == "group_index"
    assert first["joined_by"] == "train_data/3.pt rollout_position"
    # weight_versions ["1"] for rollout 3: two updates behind, one version
    assert (first[S.POLICY_LAG], first[S.POLICY_SPAN]) == (2, 0)
    # trainer logprobs against the ref's, over the trained tokens 0-2 and 6-7 only
    assert first[S.LOG_RATIO_MEAN] == pytest.approx(0.1 - 0.01 * (0 + 1 + 2 + 6 + 7) / 5)
    assert first["mismatch_kl_mean"] > 0 and first["raw_reward"] == 0.0
    assert rows.loc["rollout_data/3.pt:4", S.EXCLUDED_BY] == "status=aborted"
    tokens = run.sample("rollout_data/3.pt:2").tokens
    assert tokens[S.TOKEN].tolist() == [str(t) for t in range(11, 19)]
    trained = tokens[tokens["trained"]]
    np.testing.assert_allclose(trained[S.LOGPROB], [-0.5 - 0.01 * j for j in (0, 1, 2, 6, 7)],
                               rtol=1e-6)
    np.testing.assert_allclose(trained[S.REF_LOGPROB], -0.6, rtol=1e-6)
    np.testing.assert_allclose(trained["inference_logprobs"], -0.5)
    assert trained["mismatch_kl"].iloc[1:].gt(0).all() and tokens[S.LOG_RATIO].isna().sum() == 3


def test_every_slime_status_decides_truncation_before_the_length_cap(tmp_path):
    """Every response is 8 tokens, the run's longest: the cap would call all four cut."""
    T.rollout_file(tmp_path / "said", 3, tools=False)
    rows = _rows(open_run(tmp_path / "said", use_cache=False))
    assert rows[S.TRUNCATED].tolist() == [False, True, False, False]
    assert not rows[S.TRUNCATION_INFERRED].any()
    alone = T.rollout_file(tmp_path / "nostatus", 3, tools=False)  # no status said
    records = torch.load(alone, weights_only=False)
    for sample in records["samples"]:
        del sample["status"]
    torch.save(records, alone)
    rows = _rows(open_run(tmp_path / "nostatus", use_cache=False))
    assert rows[S.TRUNCATED].all() and rows[S.TRUNCATION_INFERRED].all()


@pytest.mark.parametrize("keys, joined", [(("sample_indices",), "sample_index"),
                                          ((), None)])
def test_a_format_2_file_joins_by_sample_index_else_stays_apart(tmp_path, keys, joined):
    root = tmp_path / "d"
    T.rollout_file(root, 3)
    T.slime_train_file(root, 3, [[0, 2], [1, 3]], keys=keys)
    run = open_run(root, use_cache=False)
    rows = _rows(run)
    if joined:
        assert len(rows) == 4 and set(rows["joined_by"]) == {f"train_data/3.pt {joined}"}
        assert rows[S.LOG_RATIO_MEAN].notna().all()
    else:  # said once, and the rollout samples shown without trainer rows
        assert len(rows) == 4 and rows[S.LOG_RATIO_MEAN].isna().all()
        assert [p["reason"] for p in run.problems] == [
            "the train file's samples carry neither rollout_position nor sample_index: "
            "trainer rows kept apart from the rollout samples",
            "4 of 4 rollout samples have no trainer row in train_data/3.pt: shown without "
            "trainer logprobs"]


def test_a_train_file_written_after_its_rollout_joins_it_on_the_next_open(tmp_path):
    root = tmp_path / "d"
    T.rollout_file(root, 3)
    assert open_run(root).samples[S.LOG_RATIO_MEAN].isna().all()
    T.slime_train_file(root, 3, [[0, 1, 2, 3]])
    run = open_run(root)
    assert len(run.samples) == 4 and run.samples[S.LOG_RATIO_MEAN].notna().all()
    (root / "train_data" / "3.pt").unlink()  # gone again: the rollout stands alone
    assert open_run(root).samples[S.LOG_RATIO_MEAN].isna().all()


def test_miles_rank_files_are_joined_once_each_and_tp_copies_dropped(tmp_path):
    root = tmp_path / "m"
    T.rollout_file(root, 5)
    for rank, positions in enumerate([[0, 2], [1, 3], [0, 2]]):  # rank 2: rank 0's TP peer
        T.miles_train_file(root, 5, rank, positions)
    run = open_run(root, use_cache=False)
    rows = _rows(run)
    assert rows.index.tolist() == [f"rollout_data/5.pt:{i}" for i in range(1, 5)]
    assert set(rows["joined_by"]) == {"train_data sample_index"} and run.problems == []
    assert rows["raw_reward"].tolist() == [0.0, 1.0, 0.0, 1.0]  # by rollout order
    assert rows[S.LOG_RATIO_MEAN].notna().all()


def test_miles_context_parallel_slices_are_stitched_back(tmp_path):
    root = tmp_path / "cp"
    T.rollout_file(root, 6)
    for cp_rank in (0, 1):
        T.miles_train_file(root, 6, cp_rank, [0, 1, 2, 3], cp=(cp_rank, 2))
    tokens = open_run(root, use_cache=False).sample("rollout_data/6.pt:2").tokens
    trained = tokens[tokens["trained"]]
    np.testing.assert_allclose(trained[S.LOGPROB], [-0.5 - 0.01 * j for j in (0, 1, 2, 6, 7)],
                               rtol=1e-6)
    (root / "train_data" / "6_1.pt").unlink()  # one CP rank missing: said, not guessed
    run = open_run(root, use_cache=False)
    assert run.samples[S.LOG_RATIO_MEAN].isna().all()
    assert "context-parallel slices could not be stitched" in run.problems[0]["reason"]


def test_train_files_alone_read_as_samples_with_every_tensor_kind(tmp_path):
    """No rollout file: format 2 and miles' ranks are samples of their own; bfloat16 and
    float16 tensors, a non-contiguous view and split views of one storage read right."""
    root = tmp_path / "alone"
    T.slime_train_file(root, 4, [[0, 2], [1, 3]])
    T.miles_train_file(root, 7, 0, [0, 2])
    T.miles_train_file(root, 7, 1, [1, 3])
    run = open_run(root, use_cache=False)
    rows = _rows(run)
    assert len(rows) == 8 and run.problems == []
    assert rows.loc["train_data/4.pt:2", S.TRUNCATED]  # its train-side truncated = 1
    tokens = run.sample("train_data/4.pt:1").tokens
    trained = tokens[tokens["trained"]]
    np.testing.assert_allclose(trained["inference_logprobs"], -0.4, rtol=1e-6)  # [:, ::2]
    np.testing.assert_allclose(trained["advantages"], -0.5)  # bfloat16
    np.testing.assert_allclose(trained["returns"], 0.5)  # float16


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_malicious_reduce_in_a_torch_file_never_runs(tmp_path):
    root = _slime(tmp_path)
    marker = tmp_path / "pwned"
    payload = pickle.dumps({"rollout_id": 1, "samples": [_Evil(marker)]}, protocol=2)
    with zipfile.ZipFile(root / "rollout_data" / "1.pt", "w") as archive:
        archive.writestr("1/data.pkl", payload)
        archive.writestr("1/byteorder", "little")
    run = open_run(root, use_cache=False)
    assert not marker.exists()
    reasons = " ".join(p["reason"] for p in run.problems)
    assert "refused global posix.system" in reasons or "refused global os.system" in reasons
    assert len(run.samples) == 4  # the good files are untouched


def _turns(run, key):
    return [(t["role"], t["text"], [c["name"] for c in t["tool_calls"]])
            for t in run.sample(key).turns]


SEARCH_TURNS = [("system", "You can search.", []), ("user", "Capital of France?", []),
                ("assistant", "Searching.", ["search"]),
                ("tool", "Paris <script>x</script>", []), ("assistant", "Paris.", [])]


def test_areal_turns_from_the_joined_texts_whatever_prompt_len_says(tmp_path):
    run = _run(tmp_path, "areal")
    assert set(run.formats.values()) == {"areal"}
    rows = _rows(run)
    row = rows.loc["rollout/3/7.jsonl:2"]
    assert (row[S.STEP], row[S.REWARD], row[S.POLICY_LAG], row[S.POLICY_SPAN]) == (3, 1.0, 1, 1)
    assert row[S.TURNS] == 5 and row[S.TOOL_NAMES] == "search"
    assert row[S.GROUP_SOURCE] == "group_id"
    assert _turns(run, "rollout/3/7.jsonl:2") == SEARCH_TURNS
    assert rows.loc["eval-rollout/3/1.jsonl:1", S.VALIDATION]


def test_skyrl_eval_dumps_and_training_pickles_never_opened(tmp_path):
    root = A.skyrl_evals(tmp_path / "skyrl")
    marker = tmp_path / "pwned"
    evil = root / "dumped_data" / "global_step_5_training_input.pkl"
    evil.parent.mkdir(parents=True)
    evil.write_bytes(pickle.dumps(_Evil(marker)))
    run = open_run(root, use_cache=False)
    assert not marker.exists()
    rows = _rows(run)
    assert rows[S.REWARD].tolist() == [1.0, 0.5]  # per-token rewards summed
    assert rows[S.VALIDATION].all() and (rows[S.STEP] == 5).all()
    assert (rows[S.LAST_FINISH] == "stop").all() and (rows[S.TURNS] == 5).all()
    assert _turns(run, "dumped_evals/global_step_5_evals/search_qa.jsonl:1") == SEARCH_TURNS
    assert not any("training_input" in f for f in run.formats)


def test_art_trajectories_with_trainable_messages(tmp_path):
    run = _run(tmp_path, "art")
    assert set(run.formats.values()) == {"art"}
    rows = _rows(run)
    row = rows.loc["trajectories/train/0002.parquet:2"]
    assert (row[S.STEP], row[S.REWARD], row[S.TURNS]) == (2, 1.0, 5)
    assert row[S.TOOL_NAMES] == "lookup" and row["metrics_turns"] == 2
    assert row[S.PROMPT] == "[system] Play.\n[user] Go [link](javascript:alert(1))"
    assert rows[S.VALIDATION].sum() == 4  # the val split
    turns = run.sample("trajectories/train/0002.parquet:2").turns
    assert turns[2]["tool_calls"][0]["pretty"] == '{\n  "word": "x"\n}'


def test_rllm_episode_files_one_sample_per_trajectory(tmp_path):
    run = _run(tmp_path, "rllm")
    assert set(run.formats.values()) == {"rllm"}
    key = "episodes/train_step_1_epoch_0/episode_hashabcd_ide_1.json:1"
    rows = _rows(run)
    assert rows.loc[key, S.REWARD] == 1.0 and rows.loc[key + "#1", "agent"] == "judge"
    assert rows.loc[key, S.TURNS] == 3 and rows.loc[key, S.LAST_FINISH] == "env_done"
    assert rows.loc[key, "is_correct"] == 1.0 and rows[S.VALIDATION].sum() == 3
    assert _turns(run, key)[-1] == ("assistant", "<think>easy</think>2", [])
    stored = "eval_run/episodes/episode_000000_t1.json:1"
    assert (rows.loc[stored, S.STEP], rows.loc[stored, S.TURNS]) == (0, 5)
    assert rows.loc[stored, S.RESPONSE_LEN] == 3 and rows.loc[stored, S.GROUP_ID] != 0
    tokens = run.sample(stored).tokens
    assert tokens[S.TURN].tolist() == [2, 2, 4] and tokens[S.LOGPROB].tolist() == [-0.1, -0.2,
                                                                                   -0.3]


def test_truncation_of_multi_turn_samples_comes_from_their_last_finish_reason(tmp_path):
    run = _run(tmp_path, "verifiers")
    rows = keyed(run)
    effective = rows[rows[S.FILE].str.contains("effective")]
    # the branch whose last call stopped at the length cap; never the cap heuristic, as a
    # masked sample's length counts its trained tokens only
    assert effective[S.TRUNCATED].tolist() == effective[S.LAST_FINISH].eq("length").tolist()


def test_the_cli_names_per_file_what_decided_truncation_group_and_join(tmp_path):
    root = _slime(tmp_path)
    out = subprocess.run([sys.executable, "-m", "loaders", str(root), "--json", "--no-cache"],
                         capture_output=True, check=True, cwd=Path(__file__).parents[2])
    decided = orjson.loads(out.stdout)["decided"]
    rollout = decided["rollout_data/3.pt"]
    assert rollout["truncation"] == ["truncated", "status"] and rollout["truncated"] == 1
    assert rollout["truncated_inferred"] == 0 and rollout["group"] == ["group_index"]
    assert rollout["joined_by"] == ["train_data/3.pt rollout_position"]
    assert decided["train_data/3.pt"] == {"format": "slime", "samples": 0,
                                          "read_with": "rollout_data/3.pt"}
