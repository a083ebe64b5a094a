"""Multi-turn trainer dumps with each format's quirks, written by the tests."""
from __future__ import annotations

from pathlib import Path

from dump_files import write_dump


def _node(parent, message, ids, mask=None, logprobs=None, **extra) -> dict:
    return {"parent": parent, "message": message, "sampled": bool(logprobs), "token_ids": ids,
            "mask": mask if mask is not None else [False] * len(ids),
            "logprobs": logprobs or [], **extra}


def verifiers_episode(step: int, i: int, *, ok: bool = True, kind: str = "train") -> dict:
    """An episode of one trace: system, user, assistant (tool call), tool, assistant; the
    assistant nodes start with 2 scaffold tokens (mask false) before their sampled ones;
    a second leaf branches off after the tool (a compaction); advantages set,
    reference_logprobs unscored (null)."""
    call = {"id": "t1", "name": "search", "arguments": '{"q": "capital of France"}'}
    nodes = [
        _node(None, {"role": "system", "content": "Use tools."}, [1, 2]),
        _node(0, {"role": "user", "content": f"Question {i}?"}, [3, 4, 5]),
        _node(1, {"role": "assistant", "content": "Let me search.", "tool_calls": [call]},
              [90, 91, 10, 11, 12], [False, False, True, True, True], [-0.1, -0.2, -0.3],
              advantages=[0.5] * 3),
        _node(2, {"role": "tool", "tool_call_id": "t1", "content": "Paris <b>bold</b>"},
              [20, 21, 22, 23]),
        _node(3, {"role": "assistant", "content": "<think>ok</think>Paris."},
              [90, 91, 30, 31], [False, False, True, True], [-0.4, -0.5], advantages=[0.5] * 2),
        _node(3, {"role": "assistant", "content": "Summary: Paris."},
              [90, 91, 40], [False, False, True], [-0.6], advantages=[0.5]),
    ]
    trace = {"version": 1, "id": f"tr{i}", "task": {"type": "QA", "data": {"q": i}},
             "agent": {"config": {}, "name": "solver", "trainable": True}, "nodes": nodes,
             # each call's wall-clock span (verifiers/v1/trace.py ModelCall.time)
             "calls": [{"node": 2, "finish_reason": "tool_calls",
                        "time": {"start": 100.0 + i, "end": 101.5 + i, "duration": 1.5}},
                       {"node": 4, "finish_reason": "stop",
                        "time": {"start": 103.0 + i, "end": 104.0 + i, "duration": 1.0}},
                       {"node": 5, "finish_reason": "length",
                        "time": {"start": 103.0 + i, "end": 105.0 + i, "duration": 2.0}}],
             "rewards": {"correct": {"score": float(i % 2), "weight": 1.0},
                         "format": {"score": 1.0, "weight": 0.5}},
             "metrics": {"num_calls": 1.0}, "is_completed": True, "ok": ok,
             "errors": [] if ok else [{"type": "ToolError", "message": "sandbox died"}]}
    return {"id": f"ep{step}-{i}", "env": {"id": "search-env"},
            "task": {"type": "QA", "data": {"q": i}, "key": f"task-{i}"},
            "group": {"id": f"g{step}-{i // 2}"},
            "run": {"type": "train", "id": "run1",
                    # the live policy versions its generation spanned (PolicySpan)
                    "work": {"type": kind, "step": step,
                             "policy": {"start": max(step - 1, 0), "end": step}}},
            "ok": ok, "errors": [] if ok else [{"type": "ToolError", "message": "sandbox died"}],
            "traces": [trace] if ok or i % 2 else []}


def prime_rollouts(root: Path) -> Path:
    """rollouts/step_N/{train,eval}/{all,effective}/traces.jsonl over two steps; `all` holds
    the effective episodes again plus one failed episode with a trace and one without
    (verifiers/v1/episode.py `Episode.to_record()`, written by prime-rl's
    src/prime_rl/monitors/file.py)."""
    for step in range(2):
        good = [verifiers_episode(step, i) for i in range(4)]
        base = root / "rollouts" / f"step_{step}"
        write_dump(base / "train" / "effective" / "traces.jsonl", good)
        failed = [verifiers_episode(step, 5, ok=False), verifiers_episode(step, 6, ok=False)]
        write_dump(base / "train" / "all" / "traces.jsonl", good + failed)
    write_dump(root / "rollouts" / "step_1" / "eval" / "effective" / "traces.jsonl",
               [verifiers_episode(1, 0, kind="eval")])
    return root


def verl_multi_turn(root: Path) -> Path:
    """verl's rollout dump of the tool agent loop (texts decoded without special tokens:
    role words on lines of their own, Hermes <tool_call> / <tool_response> blocks, two tool
    responses in one user block), and a validation dump where a custom reward kept the
    conversation as `messages` (verl/trainer/ppo/ray_trainer.py `_dump_generations`, the
    turns of verl/experimental/agent_loop/tool_agent_loop.py)."""
    prompt = "system\nYou are a math agent.\nuser\nWhat is 6*7?\nassistant\n"
    call = '<tool_call>\n{"name": "calc", "arguments": {"expr": "6*7"}}\n</tool_call>'
    output = (f"I will compute.\n{call}\nuser\n<tool_response>\n42\n</tool_response>\n"
              "<tool_response>\nError: second call timed out\n</tool_response>\nassistant\n"
              "<think>fine</think>The answer is 42.")
    lines = [{"input": prompt, "output": output if i else "The answer is 42.", "gts": "42",
              "score": 1.0, "step": 3, "acc": 1.0} for i in range(2)]
    write_dump(root / "rollout" / "3.jsonl", lines)
    messages = [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}]
    write_dump(root / "validation" / "3.jsonl", [
        {"input": "2+2?", "output": "4", "gts": "4", "score": 1.0, "reward": 1.0, "step": 3,
         "messages": messages}])
    return root


ALL = {"verifiers": prime_rollouts, "verl": verl_multi_turn}


def _chatml(role: str, text: str) -> str:
    return f"<|im_start|>{role}\n{text}<|im_end|>\n"


def _agent_text() -> tuple[str, str]:
    """(prompt, completion) of a Qwen-style tool conversation, special tokens kept."""
    prompt = _chatml("system", "You can search.") + _chatml("user", "Capital of France?") + \
        "<|im_start|>assistant\n"
    call = '<tool_call>\n{"name": "search", "arguments": {"q": "France"}}\n</tool_call>'
    completion = (f"Searching.\n{call}<|im_end|>\n"
                  + _chatml("user", "<tool_response>\nParis <script>x</script>\n</tool_response>")
                  + "<|im_start|>assistant\nParis.<|im_end|><|endoftext|><|endoftext|>")
    return prompt, completion


def areal_rollouts(root: Path) -> Path:
    """rollout/{tail_version}/{task_id}.jsonl and eval-rollout/; prompt_len counts the
    masked tool tokens as prompt (AReaL's quirk), so the split text cuts into the turns
    (areal/infra/workflow_executor.py `_dump_trajectory`)."""
    prompt, completion = _agent_text()
    cut = len(prompt) + 12  # the split point moved into the completion
    for version, task in ((2, 7), (3, 7)):
        lines = [{"task_id": task, "sample_idx": i, "seqlen": 40, "prompt_len": 20,
                  "head_version": version - 1, "tail_version": version, "reward": float(i),
                  "prompt": (prompt + completion)[:cut], "completion": (prompt + completion)[cut:]}
                 for i in range(2)]
        write_dump(root / "rollout" / str(version) / f"{task}.jsonl", lines)
    write_dump(root / "eval-rollout" / "3" / "1.jsonl", [
        {"task_id": 1, "sample_idx": 0, "seqlen": 5, "prompt_len": 2, "head_version": 3,
         "tail_version": 3, "reward": 1.0, "prompt": "2+2?", "completion": "4"}])
    return root


def skyrl_evals(root: Path) -> Path:
    """dumped_evals/global_step_{N}_evals/{data_source}.jsonl (a per-token score list in one
    line), its aggregated_results.jsonl, and a training-input pickle never to be opened
    (skyrl/train/utils/trainer_utils.py `dump_per_dataset_eval_results`)."""
    prompt, completion = _agent_text()
    base = root / "dumped_evals" / "global_step_5_evals"
    write_dump(base / "search_qa.jsonl", [
        {"input_prompt": prompt, "output_response": completion, "score": score,
         "stop_reason": "stop", "env_class": "search", "env_extras": {"gt": "Paris"},
         "data_source": "search_qa"} for score in (1.0, [0.0, 0.0, 0.5])])
    write_dump(base / "aggregated_results.jsonl", [{"eval/all/avg_score": 0.75}])
    return root


def art_trajectories(root: Path) -> Path:
    """trajectories/{split}/{step:04d}.parquet as ART writes them (tool_calls and metrics as
    JSON strings, `trainable` on the sampled messages; src/art/utils/trajectory_logging.py)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    message = pa.struct([("role", pa.string()), ("content", pa.string()),
                         ("tool_calls", pa.string()), ("tool_call_id", pa.string()),
                         ("trainable", pa.bool_())])
    calls = '[{"id": "c1", "type": "function", "function": {"name": "lookup", ' \
            '"arguments": "{\\"word\\": \\"x\\"}"}}]'
    rows = [{"group_index": g, "group_metadata": None, "group_metrics": None,
             "group_logs": None, "reward": float(i), "metrics": '{"turns": 2}',
             "metadata": '{"scenario": "s1"}', "tools": None, "logs": ["ok"],
             "messages": [
                 {"role": "system", "content": "Play.", "tool_calls": None,
                  "tool_call_id": None, "trainable": False},
                 {"role": "user", "content": "Go [link](javascript:alert(1))",
                  "tool_calls": None, "tool_call_id": None, "trainable": False},
                 {"role": "assistant", "content": "", "tool_calls": calls,
                  "tool_call_id": None, "trainable": True},
                 {"role": "tool", "content": "definition", "tool_calls": None,
                  "tool_call_id": "c1", "trainable": False},
                 {"role": "assistant", "content": "Done.", "tool_calls": None,
                  "tool_call_id": None, "trainable": True}]}
            for g in range(2) for i in range(2)]
    schema = pa.schema([("group_index", pa.int64()), ("group_metadata", pa.string()),
                        ("group_metrics", pa.string()), ("group_logs", pa.list_(pa.string())),
                        ("reward", pa.float64()), ("metrics", pa.string()),
                        ("metadata", pa.string()), ("tools", pa.string()),
                        ("logs", pa.list_(pa.string())), ("messages", pa.list_(message))])
    for split, step in (("train", 1), ("train", 2), ("val", 2)):
        path = root / "trajectories" / split / f"{step:04d}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, compression="zstd")
    return root


def rllm_episodes(root: Path) -> Path:
    """episodes/{mode}_step_{N}_epoch_0/episode_hash{h}_id{id}.json, indented, two
    trajectories (solver and judge) in one episode (rllm/utils/episode_logger.py)."""
    import json

    chat = [{"role": "system", "content": "Solve."}, {"role": "user", "content": "1+1?"},
            {"role": "assistant", "content": "<think>easy</think>2"}]
    for mode, step in (("train", 1), ("val", 1)):
        episode = {"training_step": step, "epoch": 0, "episode_id": "e:1",
                   "task": {"q": "1+1"}, "task_hash": "abcd1234", "is_correct": True,
                   "termination_reason": "ENV_DONE", "metrics": {"acc": 1.0},
                   "trajectories": [
                       {"name": name, "uid": name, "reward": reward, "num_steps": 1,
                        "steps": [{"observation": "1+1?", "action": "2", "reward": reward,
                                   "done": True, "model_response": "2",
                                   "chat_completions": chat}]}
                       for name, reward in (("solver", 1.0), ("judge", 0.5))]}
        path = root / "episodes" / f"{mode}_step_{step}_epoch_0" / "episode_hashabcd_ide_1.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(episode, indent=2) + "\n")
    # `rllm eval`'s store: Episode.model_dump with eval_idx; each step one assistant turn
    # with its response_ids and logprobs
    two = chat + [{"role": "user", "content": "sure?"}, {"role": "assistant", "content": "yes"}]
    steps = [{"chat_completions": chat, "response_ids": [7, 8], "logprobs": [-0.1, -0.2]},
             {"chat_completions": two, "response_ids": [9], "logprobs": [-0.3]}]
    store = {"id": "t1:0", "task": {"q": "1+1"}, "termination_reason": "ENV_DONE",
             "is_correct": True, "trajectories": [{"uid": "u", "name": "solver",
                                                   "reward": 1.0, "steps": steps}],
             "metrics": {}, "metadata": {}, "eval_idx": 0}
    path = root / "eval_run" / "episodes" / "episode_000000_t1.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(store, indent=2) + "\n")
    return root


ALL.update({"areal": areal_rollouts, "skyrl": skyrl_evals, "art": art_trajectories,
            "rllm": rllm_episodes})
