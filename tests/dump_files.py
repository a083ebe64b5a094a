"""What every part of the suite writes its own small, real dump files with, and where the
repo is (ROOT)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import orjson

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def make_sample(step: int, n: int = 6, seed: int = 0, **overrides) -> dict:
    """A realistic sample with n tokens; values are seeded so tests can recompute them."""
    rng = np.random.default_rng(seed + 1000 * step)
    sample = {
        "step": step,
        "prompt": f"Question {seed}: what is {step} + {n}?",
        "response": "".join(f" t{i}" for i in range(n)),
        "response_tokens": [f" t{i}" for i in range(n)],
        "logprobs": (-rng.random(n)).tolist(),
        "ref_logprobs": (-rng.random(n)).tolist(),
        "values": rng.random(n).tolist(),
        "token_rewards": [0.0] * (n - 1) + [1.0],
        "reward": float(rng.random()),
        "ref_reward": 0.25,
        "ref_response": "ref answer",
        "ground_truth": str(step + n),
    }
    sample.update(overrides)
    return sample


def keyed(run, rows=None):
    """A run's rows (all of them by default) with their keys and what a served run reads by
    row (text previews, where each line is, token digests), as a page shows them."""
    return run.with_previews(run.samples if rows is None else rows)


def line_of(obj: dict) -> bytes:
    return orjson.dumps(obj) + b"\n"


def write_dump(path: Path, samples: list[dict], extra: bytes = b"") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line_of(s) for s in samples) + extra)
    return path

def edit_in_place(path: Path, old: bytes, new: bytes) -> None:
    """Overwrite `old` (which must occur once) with a same-length `new`, in place, as `sed -i`
    would leave a file whose size stays the same."""
    data = path.read_bytes()
    assert len(old) == len(new) and data.count(old) == 1
    with open(path, "r+b") as handle:
        handle.seek(data.index(old))
        handle.write(new)


LOSING_PROMPT = "A prompt RL never wins"  # the board_dump fixture's prompt RL never beats
