"""Multi-turn trainer dumps with each format's quirks, written by the tests."""
from __future__ import annotations

from pathlib import Path

from conftest import write_dump


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
             "calls": [{"node": 2, "finish_reason": "tool_calls"},
                       {"node": 4, "finish_reason": "stop"},
                       {"node": 5, "finish_reason": "length"}],
             "rewards": {"correct": {"score": float(i % 2), "weight": 1.0},
                         "format": {"score": 1.0, "weight": 0.5}},
             "metrics": {"num_calls": 1.0}, "is_completed": True, "ok": ok,
             "errors": [] if ok else [{"type": "ToolError", "message": "sandbox died"}]}
    return {"id": f"ep{step}-{i}", "env": {"id": "search-env"},
            "task": {"type": "QA", "data": {"q": i}, "key": f"task-{i}"},
            "group": {"id": f"g{step}-{i // 2}"},
            "run": {"type": "train", "id": "run1",
                    "work": {"type": kind, "step": step}},
            "ok": ok, "errors": [] if ok else [{"type": "ToolError", "message": "sandbox died"}],
            "traces": [trace] if ok or i % 2 else []}


def prime_rollouts(root: Path) -> Path:
    """rollouts/step_N/{train,eval}/{all,effective}/traces.jsonl over two steps; `all` holds
    the effective episodes again plus one failed episode with a trace and one without."""
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
    conversation as `messages`."""
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
