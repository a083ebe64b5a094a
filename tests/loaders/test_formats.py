"""Each trainer's format, written by format_fixtures, through the loaders."""
import math
import subprocess
import sys

import agent_format_fixtures as A
import format_fixtures as F
import numpy as np
import orjson
import pytest
from dump_files import ROOT, keyed, write_dump

from loaders import DumpError, open_run
from loaders import schema as S
from loaders.find.kind import detect
from loaders.formats import by_path


def _run(tmp_path, name):
    return open_run(F.ALL[name](tmp_path / name))


def _row(run, key):
    rows = keyed(run)
    return rows[rows[S.KEY] == key].iloc[0]


def test_native_forks_keep_fork_keys_and_split_validation(tmp_path):
    run = _run(tmp_path, "native")
    assert set(run.formats.values()) == {"native"}
    assert run.samples[S.VALIDATION].sum() == 1 and run.has_validation
    train = run.part(validation=False)
    assert len(train.samples) == 6 and not train.samples[S.VALIDATION].any()
    held_out = run.part(validation=True)
    assert held_out.with_previews(held_out.samples)[S.PROMPT].tolist() == ["vq"]
    assert train.samples["entropy_mean"].tolist() == [1.0, 2.0, 3.0] * 2
    assert set(train.samples["data_source"]) == {"gsm8k"}
    assert train.samples[S.VALUE_MEAN].isna().all()
    tokens = run.sample("rollout_data_rank0.jsonl:1").tokens
    assert {"advantages", "kl", "entropy"} <= set(tokens.columns)


def test_verl_maps_keys_and_marks_validation(tmp_path):
    run = _run(tmp_path, "verl")
    assert set(run.formats.values()) == {"verl"}
    row = _row(run, "rollout/2.jsonl:3")
    assert (row[S.STEP], row[S.REWARD], row[S.GROUND_TRUTH]) == (2, 1.0, "2")
    assert row[S.RESPONSE] == "answer 2 at 2" and row["acc"] == 1.0
    assert row["request_id"] == "r2-2" and row[S.RESPONSE_LEN] == 0
    assert keyed(run, run.samples[run.samples[S.VALIDATION]])[S.KEY].tolist() == [
        "validation/0.jsonl:1"]
    assert run.sample("rollout/1.jsonl:1").tokens.empty


def test_roll_board_masks_padding_and_reads_values_as_token_rewards(tmp_path):
    run = _run(tmp_path, "roll_board")
    assert run.formats == {"data_20260101_120000_123.jsonl": "roll_board"}
    assert run.samples[S.RESPONSE_LEN].tolist() == [3, 4, 5]
    assert not run.samples[S.LENGTH_MISMATCH].any()
    assert run.samples[S.VALUE_MEAN].isna().all()
    np.testing.assert_allclose(run.samples[S.TOKEN_REWARD_SUM], [1.0, 2.0, 3.0])
    tokens = run.sample("data_20260101_120000_123.jsonl:2").tokens
    assert tokens[S.TOKEN].tolist() == ["x"] * 4
    assert tokens[S.TOKEN_REWARD].tolist() == [0.0, 0.0, 0.0, 2.0]
    assert tokens["entropy"].tolist() == [2.0] * 4 and "log_probs2" in tokens


def test_roll_dump_explodes_one_line_into_samples(tmp_path):
    run = _run(tmp_path, "roll_dump")
    assert len(run.samples) == 8 and run.steps == [3, 4]
    keys = run.step_rows(3)[S.KEY].tolist()
    assert keys == ["rollout_dump_data.step_3.jsonl:1"] + [
        f"rollout_dump_data.step_3.jsonl:1#{i}" for i in (1, 2, 3)]
    sample = run.sample("rollout_dump_data.step_4.jsonl:1#2")
    assert sample.texts[S.RESPONSE] == "resp 2" and sample.texts[S.PROMPT] == "prompt 2"
    assert sample.scalars[S.REWARD] == 0.0 and sample.step == 4


def test_trl_parquet_rows_and_summed_rewards(tmp_path):
    run = _run(tmp_path, "trl")
    assert set(run.formats.values()) == {"trl"} and run.steps == [10, 20]
    rows = run.step_rows(10)
    assert rows[S.REWARD].tolist() == [1.5, 0.0, 1.5]  # NaN format_reward left out of the sum
    assert rows["advantage"].tolist() == [0.7, -1.2, 0.5]
    assert rows["accuracy_reward"].tolist() == [1.0, 0.0, 1.0]
    sample = run.sample("completions/completions_00020.parquet:2")
    assert sample.texts[S.RESPONSE] == "c1" and sample.texts[S.PROMPT] == "q1"


def test_nemo_rl_unwraps_slices_and_keeps_response_tokens(tmp_path):
    run = _run(tmp_path, "nemo_rl")
    trained = run.samples[~run.samples[S.VALIDATION]]
    assert trained[S.REWARD].tolist() == [0.0, 1.0]
    assert trained[S.RESPONSE_LEN].tolist() == [4, 4]
    sample = run.sample("exp_001/train_data_step2.jsonl:2")
    # the answer, not the environment's observation the rollout appends after it
    assert sample.texts[S.RESPONSE] == "<|assistant|>4 (1)"
    assert sample.texts[S.PROMPT] == "<|system|>be brief<|user|>what is 2+2?"
    valid = run.sample("exp_001/val_data_step2.jsonl:1")  # role-tagged messages
    assert valid.texts[S.PROMPT] == "[user] what is 3+3?"
    assert [t["raw_role"] for t in valid.turns] == ["user", "assistant", "environment"]
    tokens = sample.tokens
    assert tokens[S.TOKEN].tolist() == ["103", "104", "105", "106"]
    np.testing.assert_allclose(tokens[S.LOGPROB] - tokens["inference_logprobs"], 0.01)
    r = -0.01  # inference − trainer
    np.testing.assert_allclose(tokens["mismatch_kl"], math.expm1(-r) + r)
    np.testing.assert_allclose(tokens["advantages"], -0.5)
    assert trained["mismatch_kl_mean"].notna().all()


def test_nemo_rl_several_turns_become_a_conversation_whose_tokens_name_their_answer(tmp_path):
    """Two answers, each followed by the environment's observation: four trained tokens in
    two runs (nemo_rl/experience/rollouts.py appends an observation after every turn)."""
    line = {"content": [["q?", "a1", "obs 1", "a2", "obs 2"]], "rewards": [1.0],
            "token_ids": [[1, 2, 3, 4, 5, 6, 7, 8]],
            "token_loss_mask": [[0, 1, 1, 0, 0, 1, 1, 0]],
            "prev_logprobs": [[0.0] + [-0.5] * 7], "generation_logprobs": [[0.0] + [-0.4] * 7]}
    root = tmp_path / "multi"
    write_dump(root / "train_data_step1.jsonl", [line])
    run = open_run(root, use_cache=False)
    row = run.with_previews(run.samples).iloc[0]
    assert row[S.TURNS] == 5 and row[S.RESPONSE_LEN] == 4
    sample = run.sample("train_data_step1.jsonl:1")
    assert [t["raw_role"] for t in sample.turns] == ["user", "assistant", "environment",
                                                     "assistant", "environment"]
    assert sample.tokens[S.TURN].tolist() == [1, 1, 3, 3]
    assert sample.texts[S.PROMPT] == "[user] q?"


def test_roll_agentic_dump_one_trajectory_a_position(tmp_path):
    run = open_run(F.roll_agentic(tmp_path / "agentic"), use_cache=False)
    assert set(run.formats.values()) == {"roll_dump"} and run.problems == []
    rows = run.with_previews(run.samples).set_index(S.KEY)
    def key(i):  # the first position is the line itself
        return "rollout_dump_data.step_5.jsonl:1" + (f"#{i}" if i else "")

    assert rows[S.REWARD].tolist() == [0.0, 1.0, 0.0, 1.0] and run.steps == [5]
    assert rows.loc[key(1), S.TRUNCATED] and not rows[S.TRUNCATION_INFERRED].any()
    assert rows.loc[key(1), "stop_reason"] == "MAX_STEPS"
    assert rows[S.VALIDATION].tolist() == [False, False, False, True]
    assert (rows[S.GROUP_SOURCE] == "group_id").all() and rows.loc[key(0), S.TURNS] == 5
    sample = run.sample(key(0))
    assert [t["role"] for t in sample.turns][:3] == ["system", "user", "assistant"]
    assert sample.texts[S.PROMPT] == "[system] Push the box.\n[user] State: #@$."


def test_prime_rl_waits_for_stable_and_shows_token_ids(tmp_path):
    run = _run(tmp_path, "prime_rl")
    assert list(run.formats) == ["token_exports/step_1/rank_0.jsonl"]
    # current exports carry no reward (prime-rl 0be5ac452): none is made up
    assert run.steps == [1] and run.samples[S.REWARD].isna().all()
    assert run.with_previews(run.samples)["env"].tolist() == ["gsm8k", "gsm8k"]
    tokens = run.sample("token_exports/step_1/rank_0.jsonl:1").tokens
    assert tokens[S.TOKEN].tolist() == ["2", "3", "4"]
    assert tokens["importance_ratio"].tolist() == [0.98] * 3
    assert {"entropy", "mismatch_kl", "advantages", "inference_logprobs",
            "prob_delta"} <= set(tokens)
    assert not {"is_masked", "position_ids", "rl_weights", "ce_weights", "ref_kl_weights",
                "log_importance_ratio"} & set(tokens)
    older = open_run(F.prime(tmp_path / "older", rewards=True), use_cache=False)
    assert older.samples[S.REWARD].tolist() == [1.0, 1.0]
    (tmp_path / "prime_rl" / "token_exports" / "step_2" / "STABLE").touch()
    assert open_run(tmp_path / "prime_rl").steps == [1, 2]


def test_unknown_layout_lists_what_was_found_and_what_is_supported(tmp_path):
    F.unknown(tmp_path / "u")
    with pytest.raises(DumpError) as err:
        open_run(tmp_path / "u")
    message = str(err.value)
    assert "logs/metrics.jsonl" in message and "verl" in message and "prime-rl" in message
    assert "\n" not in message


def test_mixed_folder_is_handled_file_by_file(tmp_path):
    root = tmp_path / "mixed"
    F.verl(root / "a")
    F.roll_dump(root / "b")
    F.unknown(root / "c")
    run = open_run(root)
    formats = run.formats
    assert formats["a/rollout/1.jsonl"] == "verl" and formats["b/rollout_dump_data.step_3.jsonl"] \
        == "roll_dump" and formats["c/logs/metrics.jsonl"] == "metrics"
    assert not any(p["file"] == "c/logs/metrics.jsonl" for p in run.problems)  # metrics
    (root / "c" / "odd.jsonl").write_bytes(b'{"hello": "world"}\n')
    run = open_run(root)
    assert any(p["file"] == "c/odd.jsonl" and "known dump format" in p["reason"]
               for p in run.problems)
    assert len(run.samples) == 15


def test_cli_reports_formats(tmp_path):
    F.roll_board(tmp_path / "r")
    out = subprocess.run([sys.executable, "-m", "loaders", str(tmp_path / "r"), "--json"],
                         cwd=ROOT, capture_output=True, timeout=120)
    assert orjson.loads(out.stdout)["formats"] == {"data_20260101_120000_123.jsonl":
                                                   "roll_board"}


@pytest.mark.parametrize(("rel", "name"), [
    ("rollout_data_rank_3.jsonl", "native"), ("rollout_data_rank7.jsonl", "native"),
    ("rollout_data_rank_val2.jsonl", "native"), ("x/12.jsonl", "verl"),
    ("data_20250101_101010_007.jsonl", "roll_board"),
    ("rollout_dump_data.step_12.jsonl", "roll_dump"),
    ("completions/completions_00012.parquet", "trl"), ("exp/train_data_step9.jsonl", "nemo_rl"),
    ("token_exports/step_3/rank_1.jsonl", "prime_rl"), ("notes.jsonl", None)])
def test_names(rel, name):
    found = by_path(rel)
    assert (found.name if found else None) == name


def test_keys_beat_a_vague_name(tmp_path):
    path = write_dump(tmp_path / "5.jsonl", [{"step": 5, "prompt": "p", "response": "r"}])
    assert detect(path, "5.jsonl") == "native"
    garbage = tmp_path / "junk.jsonl"
    garbage.write_bytes(b"not json\n")
    assert detect(garbage, "junk.jsonl") == "native"  # its bad lines get reported one by one


def test_dir_names_do_not_make_steps_or_validation(tmp_path):
    root = tmp_path / "grpo_validation_ablation"
    write_dump(root / "3" / "rollout_data_rank_0.jsonl",
               [{"step": 1, "response": "a", "reward": 1.0}, {"response": "no step"}])
    run = open_run(root)
    assert run.samples[S.STEP].tolist() == [1] and not run.has_validation
    assert [p["reason"] for p in run.problems] == ["missing 'step'"]


def test_prime_rl_episodes_and_token_exports_are_said_to_be_held_twice(tmp_path):
    """Both of prime-rl's outputs in one run dir: no key joins them, so the run says so once
    and shows both apart; either alone says nothing."""
    root = tmp_path / "run"
    A.prime_rollouts(root)
    assert open_run(root, use_cache=False).notes == []
    F.prime(root)
    run = open_run(root, use_cache=False)
    assert len(run.notes) == 1 and "no key joins an export to its episode" in run.notes[0]
    assert {"verifiers", "prime_rl"} <= set(run.formats.values())
    out = subprocess.run([sys.executable, "-m", "loaders", str(root)], capture_output=True,
                         text=True, check=True, cwd=ROOT)
    assert out.stdout.count("note: prime-rl's token exports") == 1
