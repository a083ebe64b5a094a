"""Small, realistic dumps in each trainer's format, with that format's quirks."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from dump_files import line_of, write_dump


def _logprobs(n: int, seed: int) -> list[float]:
    return (-np.random.default_rng(seed).random(n)).tolist()


def native_forks(root: Path) -> Path:
    """rollout_data_rank{N}.jsonl (no underscore), fork keys, no critic; a validation file."""
    train = []
    for step in range(2):
        for i in range(3):
            n = 4 + i
            train.append({
                "step": step, "prompt": f"q{i}", "response": "a" * n, "response_tokens": ["a"] * n,
                "logprobs": _logprobs(n, i), "ref_logprobs": _logprobs(n, i + 50), "values": None,
                "token_rewards": [0.0] * n, "reward": 0.1 * i + step, "advantages": [0.5] * n,
                "kl": [0.01] * n, "entropy": [1.0 + i] * n, "data_source": "gsm8k",
                "rm_response": "looks right", "img_path": "/data/img.png"})
    write_dump(root / "rollout_data_rank0.jsonl", train)
    val = [{"step": 1, "prompt": "vq", "response": "v", "reward": 0.9, "validation": True}]
    write_dump(root / "rollout_data_rank_val0.jsonl", val)
    return root


def verl(root: Path) -> Path:
    """{global_step}.jsonl with reward_extra_info keys; validation lines carry `reward`
    (verl/trainer/ppo/ray_trainer.py `_dump_generations`: input, output, gts, score, step
    and every reward_extra_info list of the batch's length)."""
    for step in (1, 2):
        lines = [{"input": f"<|user|>question {i}", "output": f"answer {i} at {step}",
                  "gts": str(i), "score": float(i == step), "step": step, "acc": float(i == step),
                  "format_reward": 0.5, "request_id": f"r{step}-{i}"} for i in range(3)]
        write_dump(root / "rollout" / f"{step}.jsonl", lines)
    val = [{"input": "val q", "output": "val a", "gts": "1", "score": 1.0, "reward": 1.0,
            "step": 0}]
    write_dump(root / "validation" / "0.jsonl", val)
    return root


def roll_board(root: Path, pad: int = 3, prompt_len: int = 4) -> Path:
    """data_{date}_{time}_{ms}.jsonl: padded tokens, a mask, rewards written into `values`
    (roll/pipeline/rlvr/rlvr_pipeline.py `RLVRPipeline.save_metrics`)."""
    samples = []
    for i in range(3):
        n = 3 + i
        rewards = [0.0] * (prompt_len - 1 + n + pad)
        rewards[prompt_len - 1 + n - 1] = 1.0 + i
        samples.append({
            "step": 7, "prompt": f"p{i}", "response": "x" * n + "<pad>" * pad,
            "response_tokens": ["x"] * n + ["<pad>"] * pad,
            "logprobs": _logprobs(n, i) + [0.0] * pad,
            "ref_logprobs": _logprobs(n, i + 9) + [0.0] * pad,
            "log_probs2": _logprobs(n, i + 20) + [0.0] * pad,
            "old_log_probs2_entropy": [2.0] * n + [0.0] * pad,
            "new_response_mask": [1] * n + [0] * pad,
            "values": rewards, "token_rewards": rewards, "reward": 1.0 + i})
    write_dump(root / "data_20260101_120000_123.jsonl", samples)
    return root


def roll_dump(root: Path) -> Path:
    """rollout_dump_data.step_{N}.jsonl: ONE columnar line per step (roll/pipeline/rlvr/
    utils.py `dump_rollout_to_specific_path`)."""
    for step in (3, 4):
        n = 4
        line = {"global_step": [step] * n, "id": [f"id{i}" for i in range(n)],
                "prompt": [f"prompt {i}" for i in range(n)],
                "messages": [json.dumps([{"role": "user", "content": f"prompt {i}"}])
                             for i in range(n)],
                "ground_truth": [str(i) for i in range(n)],
                "responses": [f"resp {i}" for i in range(n)],
                "scores": [float(i % 2) for i in range(n)], "tag": ["math"] * n,
                "sampling_params": [json.dumps({"temperature": 1.0})] * n}
        write_dump(root / f"rollout_dump_data.step_{step}.jsonl", [line])
    return root


def roll_agentic(root: Path) -> Path:
    """rollout_dump_data.step_{N}.jsonl from ROLL's agentic pipeline (roll/pipeline/agentic/
    utils.py `dump_rollout_trajectories`): `trajectory_data`, `messages` and `tools` as JSON
    text (agent_native_env_manager.py `formulate_rollouts`), `exp_name`, `global_step`."""
    def trajectory(i: int, mode: str) -> str:
        return json.dumps({
            "trajectory_id": f"t{i}", "current_step": 5,
            "env_info": {"env_id": i, "group_id": i // 2, "tag": "sokoban", "mode": mode},
            "length_info": {"trajectory_length": 2, "num_actions": 2, "terminated": i != 1,
                            "truncated": i == 1},
            "reward_info": {"episode_reward": float(i % 2), "step_rewards": [0.0, float(i % 2)]},
            "failure_info": {"failure_mode": "", "stop_reason": "MAX_STEPS" if i == 1
                             else "TERMINATED", "has_failure": False},
            "metrics": {}, "last_observation": "done"})

    messages = json.dumps([{"role": "system", "content": "Push the box."},
                           {"role": "user", "content": "State: #@$."},
                           {"role": "assistant", "content": "Right"},
                           {"role": "user", "content": "State: #_@$"},
                           {"role": "assistant", "content": "Right"}])
    n = 4
    line = {"trajectory_data": [trajectory(i, "train" if i < 3 else "val") for i in range(n)],
            "messages": [messages] * n, "tools": ["[]"] * n, "exp_name": ["agentic"] * n,
            "global_step": [5] * n}
    write_dump(root / "rollout_dump_data.step_5.jsonl", [line])
    return root


def trl(root: Path) -> Path:
    """completions/completions_{step:05d}.parquet, one reward column per function, as
    trl/trainer/grpo_trainer.py `GRPOTrainer.log` writes it: pandas' to_parquet, texts
    decoded without special tokens, NaN where a reward function returned None."""
    for step in (10, 20):
        table = pd.DataFrame({
            "step": [step] * 3, "prompt": [f"q{i}" for i in range(3)],
            "completion": [f"c{i}" for i in range(3)],
            "accuracy_reward": [1.0, 0.0, 1.0], "format_reward": [0.5, float("nan"), 0.5],
            "advantage": [0.7, -1.2, 0.5]})
        (root / "completions").mkdir(parents=True, exist_ok=True)
        table.to_parquet(root / "completions" / f"completions_{step:05d}.parquet")
    return root


def nemo(root: Path, prompt_len: int = 3, n: int = 4, pad: int = 2) -> Path:
    """train_data_step{N}.jsonl: length-1 slices over the full, right-padded sequence
    (nemo_rl/utils/logger.py `log_batched_dict_as_jsonl`, from nemo_rl/algorithms/grpo.py)."""
    lines = []
    for i in range(2):
        total = prompt_len + n + pad
        mask = [0] * prompt_len + [1] * n + [0] * pad
        gen = [0.0] * prompt_len + _logprobs(n, i) + [0.0] * pad
        prev = _logprobs(prompt_len, 7) + [g + 0.01 for g in gen[prompt_len:prompt_len + n]] \
            + [0.0] * pad
        lines.append({
            # the prompt, the answer, and the environment's observation the rollout appends
            # after every turn (nemo_rl/experience/rollouts.py)
            "content": [["<|system|>be brief<|user|>what is 2+2?", f"<|assistant|>4 ({i})",
                         "Environment: correct" if i else "Environment: incorrect"]],
            "rewards": [float(i)], "input_lengths": [prompt_len + n],
            "token_ids": [list(range(100, 100 + total))], "token_loss_mask": [mask],
            "sample_loss_mask": [1], "advantages": [[0.5 - i] * total],
            "generation_logprobs": [gen], "prev_logprobs": [prev], "idx": i})
    write_dump(root / "exp_001" / "train_data_step2.jsonl", lines)
    # validation: role-tagged messages, no tokens (nemo_rl/algorithms/grpo.py `validate`)
    write_dump(root / "exp_001" / "val_data_step2.jsonl", [{
        "content": [[{"role": "user", "content": "what is 3+3?"},
                     {"role": "assistant", "content": "6"},
                     {"role": "environment", "content": "Environment: correct"}]],
        "rewards": [1.0], "idx": 0}])
    return root


def prime(root: Path, prompt_len: int = 2, n: int = 3, rewards: bool = False) -> Path:
    """token_exports/step_N/rank_R.jsonl as src/prime_rl/trainer/rl/token_export.py
    `TokenExporter.export` writes it (`_export_columns`; json.dumps, allow_nan=False, so a
    non-finite value is null); step 2 lacks STABLE (still being written).  Current exports
    hold no reward (prime-rl 0be5ac452 took `rewards` out); with rewards, the older layout's
    `rewards` broadcast over the tokens."""
    for step, stable in ((1, True), (2, False)):
        folder = root / "token_exports" / f"step_{step}"
        lines = []
        for rank_item in range(2):
            total = prompt_len + n
            inf = [None] * prompt_len + _logprobs(n, rank_item)
            train = [0.0] * prompt_len + [v - 0.02 for v in inf[prompt_len:]]
            line = {
                "schema_version": 1, "step": step, "rank": 0, "micro_step": 0,
                "micro_sequence_idx": rank_item, "export_sequence_idx": rank_item,
                "env_name": "gsm8k", "token_ids": list(range(total)),
                "position_ids": list(range(total)),
                "loss_mask": [False] * prompt_len + [True] * n,
                "advantages": [0.3] * total, "inference_logprobs": inf,
                "trainer_logprobs": train, "entropy": [0.8] * total,
                "mismatch_kl": [0.001] * total, "log_importance_ratio": [-0.02] * total,
                "importance_ratio": [0.98] * total, "prob_delta": [0.01] * total,
                "is_masked": [False] * total, "is_masked_high": [False] * total,
                "is_masked_low": [False] * total, "rl_weights": [None] * total,
                "ce_weights": [None] * total, "ref_kl_weights": [None] * total}
            if rewards:
                line["rewards"] = [1.0] * total
            lines.append(line)
        write_dump(folder / "rank_0.jsonl", lines)
        if stable:
            (folder / "STABLE").touch()
    return root


def unknown(root: Path) -> Path:
    """A run folder holding only scalar metrics: no dump in any known format."""
    (root / "logs").mkdir(parents=True, exist_ok=True)
    (root / "logs" / "metrics.jsonl").write_bytes(
        line_of({"step": 1, "data": {"actor/entropy": 1.2}}))
    return root


ALL = {"native": native_forks, "verl": verl, "roll_board": roll_board, "roll_dump": roll_dump,
       "trl": trl, "nemo_rl": nemo, "prime_rl": prime}
