"""Tinker cookbook rollout summaries and open-instruct saved traces, written line for line as
their writers write them (json.dumps of the same dicts; the writers need their trainers'
packages, which these tests do not install)."""
from __future__ import annotations

import json
from pathlib import Path


def tinker_record(iteration: int, group: int, traj: int, reward: float,
                  stop: str = "completed", split: str = "train") -> dict:
    """tinker_cookbook/rl/rollout_logging.py `serialize_rollout_summaries`, one trajectory of
    two transitions; the stop reason as the last transition's one-hot `stop/<reason>` metric
    (tinker_cookbook/rl/types.py `StopReason`)."""
    steps = [{"step_idx": 0, "ob_len": 40, "ac_len": 12, "reward": 0.0,
              "episode_done": False, "metrics": {"tool_calls": 1}, "logs": {"tool": "calc"}},
             {"step_idx": 1, "ob_len": 60, "ac_len": 30, "reward": reward,
              "episode_done": True, "metrics": {f"stop/{stop}": 1.0, "correct": reward},
              "logs": {}}]
    return {"schema_version": 1, "split": split, "iteration": iteration, "group_idx": group,
            "traj_idx": traj, "tags": ["gsm8k", "tools"],
            "sampling_client_step": max(iteration - 1, 0), "total_reward": reward,
            "final_reward": reward, "trajectory_metrics": {"turns": 2, "note": "text"},
            "steps": steps, "final_ob_len": 100}


def tinker_run(root: Path) -> Path:
    """Two iterations of two groups of two trajectories, and one eval file
    (tinker_cookbook/stores/training_store.py: iteration_{i:06d}/{base}_rollout_summaries)."""
    for iteration in (0, 1):
        records = [tinker_record(iteration, g, t, float((g + t + iteration) % 2),
                                 stop="max_tokens" if (g, t) == (1, 1) else "completed")
                   for g in range(2) for t in range(2)]
        _lines(root / f"iteration_{iteration:06d}" / "train_rollout_summaries.jsonl", records)
    _lines(root / "iteration_000001" / "eval_gsm8k_rollout_summaries.jsonl",
           [tinker_record(1, 0, 0, 1.0, split="eval/gsm8k")])
    return root


def open_instruct_record(step: int, i: int, per_prompt: int = 2) -> dict:
    """open_instruct/rl_utils.py `_save_rollouts`: asdict(RolloutRecord(...))."""
    n = 4 + i % 3
    return {"step": step, "sample_idx": i, "prompt_idx": i // per_prompt,
            "prompt_tokens": [1, 2, 3, 10 + i // per_prompt],
            "response_tokens": list(range(100, 100 + n)), "reward": float(i % 2),
            "advantage": 1.0 if i % 2 else -1.0,
            "finish_reason": "length" if i == 3 else "stop", "dataset": "gsm8k",
            "ground_truth": "42",
            "request_info": {"num_calls": i % 2, "timeouts": 0, "tool_errors": "",
                             "tool_outputs": "", "tool_runtimes": 0.5, "tool_calleds": bool(i % 2),
                             "tool_call_stats": [], "rollout_state": {}},
            "logprobs": [-0.1 * (k + 1) for k in range(n)]}


def open_instruct_run(root: Path) -> Path:
    """Two steps of 4 samples in shard 0, and the run's metadata file beside it."""
    _lines(root / "grpo_run_rollouts_000000.jsonl",
           [open_instruct_record(step, i) for step in (1, 2) for i in range(4)])
    _lines(root / "grpo_run_metadata.jsonl",
           [{"run_name": "grpo_run", "git_commit": "abc", "model_name": "m",
             "timestamp": "2026-11-26T00:00:00+00:00"}])
    return root


def _lines(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:  # as both writers do: json.dumps, one a line
        for record in records:
            handle.write(json.dumps(record) + "\n")
