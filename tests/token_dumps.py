"""Long reasoning-style samples (byte-level tokens, <think> … </think>, one KL spike) for the
token-view tests and benchmarks."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson

WORDS = ["ĠWait", "Ġthe", "Ġanswer", "Ġis", "Ġ2", ",", "Ġso", "Ċ", "Ġlet", "Ġme", "Ġcheck",
         ".", "ĊĊ", "Ġx", "Ġ=", "Ġ4", "ĠHmm", "Ġ<b>"]
SPIKE_LOG_RATIO = 9.0


def long_sample(n: int, step: int = 0, seed: int = 0, spike: int | None = None) -> dict:
    """A response of n tokens: <think> first, </think> at 80 %, calm log-ratios but one
    spike (log_ratio SPIKE_LOG_RATIO) at `spike`."""
    rng = np.random.default_rng([seed, step, n])
    tokens = [WORDS[i] for i in rng.integers(0, len(WORDS), n)]
    tokens[0] = "<think>"
    tokens[int(n * 0.8)] = "</think>"
    logprobs = -np.minimum(rng.lognormal(-2.5, 1.0, n), 20.0)
    ref = logprobs + rng.normal(0.0, 0.02, n)
    if spike is not None:
        ref[spike] = logprobs[spike] - SPIKE_LOG_RATIO
    text = "".join(tokens).replace("Ġ", " ").replace("Ċ", "\n")
    return {"step": step, "prompt": f"Prove {seed} + {step} = ?", "response": text,
            "response_tokens": tokens, "logprobs": np.round(logprobs, 6).tolist(),
            "ref_logprobs": np.round(ref, 6).tolist(),
            "values": np.round(rng.random(n), 4).tolist(),
            "token_rewards": [0.0] * (n - 1) + [1.0],
            "entropy": np.round(rng.gamma(1.0, 0.5, n), 4).tolist(),
            "reward": 1.0, "ref_reward": 0.5, "ref_response": "ref", "ground_truth": "4"}


def write_long_dump(root: Path, n: int = 32768, samples: int = 2, spike: int = 20_000) -> Path:
    """rollout_data_rank_0.jsonl with `samples` long samples at step 0 (the first has the
    spike); returns root."""
    root.mkdir(parents=True, exist_ok=True)
    lines = [orjson.dumps(long_sample(n, seed=i, spike=spike if i == 0 else None)) + b"\n"
             for i in range(samples)]
    (root / "rollout_data_rank_0.jsonl").write_bytes(b"".join(lines))
    return root
