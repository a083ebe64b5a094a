"""Multi-turn (agentic) samples in the board's own layout, written by the tests."""
from __future__ import annotations

from pathlib import Path

from dump_files import write_dump

HOSTILE = ('<script>document.title="pwned"</script><img src=x onerror=alert(1)>'
           ' [click](javascript:alert(1)) ![img](http://example.invalid/x.png)')
EXTREME = 1e6  # what masked (environment) tokens carry: it must enter no statistic


def agent_sample(step: int, i: int, *, error: bool = False, tool: str = "python") -> dict:
    """A system/user/assistant/tool/assistant conversation over 10 response tokens: the
    first assistant turn (3 tokens), the tool output (4 tokens, masked, extreme values), the
    last assistant turn (3 tokens)."""
    output = "Traceback (most recent call last): boom" if error else f"result {i} {HOSTILE}"
    messages = [
        {"role": "system", "content": "You are a solver."},
        {"role": "user", "content": f"question {i} {HOSTILE}"},
        {"role": "assistant", "content": "<think>let me run code</think>I will run it.",
         "tool_calls": [{"id": "c1", "type": "function", "function": {
             "name": tool, "arguments": '{"code": "print(1) </script><script>alert(1)"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "name": tool, "content": output},
        {"role": "assistant", "content": f"The answer is {i}.", "finish_reason": "stop"},
    ]
    mask = [1, 1, 1, 0, 0, 0, 0, 1, 1, 1]
    trained_lp, env = -0.5, EXTREME
    return {
        "step": step, "messages": messages, "reward": float(i % 2), "group_index": i // 2,
        "response_tokens": ["I", " will", " run", "<tool>", "res", "ult", "</tool>", "The",
                            " answer", "."],
        "logprobs": [trained_lp if m else -env for m in mask],
        "ref_logprobs": [trained_lp - 0.1 if m else env for m in mask],
        "entropy": [0.25 if m else env for m in mask],
        "values": [0.5 if m else env for m in mask],
        "token_rewards": [0.0 if m else env for m in mask],
        "loss_mask": mask,
        "token_turns": [2, 2, 2, 3, 3, 3, 3, 4, 4, 4],
    }


def native_agent(root: Path) -> Path:
    """Two steps of four conversations; one tool error; a single-turn sample beside them."""
    lines = [agent_sample(step, i, error=(i == 3), tool="search" if i == 2 else "python")
             for step in range(2) for i in range(4)]
    lines.append({"step": 1, "prompt": "plain", "response": "single turn", "reward": 0.5,
                  "finish_reason": "length"})
    write_dump(root / "rollout_data_rank0.jsonl", lines)
    return root
