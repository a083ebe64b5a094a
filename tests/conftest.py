"""Shared helpers: tests write their own small, real dump files."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import orjson
import pytest

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



@pytest.fixture
def dump_dir(tmp_path: Path) -> Path:
    """Two ranks, three steps, four samples per rank and step."""
    root = tmp_path / "run"
    for rank in range(2):
        samples = [make_sample(step, n=4 + i, seed=rank * 10 + i)
                   for step in range(3) for i in range(4)]
        write_dump(root / f"rollout_data_rank_{rank}.jsonl", samples)
    return root


LOSING_PROMPT = "A prompt RL never wins"


@pytest.fixture
def board_dump(tmp_path: Path) -> Path:
    """Three steps x two ranks x four samples, plus a prompt RL never beats, a padded sample,
    an HTML payload and a bad line: enough for every page."""
    root = tmp_path / "board"
    for rank in range(2):
        samples = []
        for step in range(3):
            for i in range(4):
                sample = make_sample(step, n=5 + i, seed=rank * 10 + i, prompt=f"Question {i}",
                                     reward=round(0.1 * i + 0.2 * step + 0.05 * rank, 3))
                if i == 3:
                    sample.update(prompt=LOSING_PROMPT, reward=0.1, ref_reward=0.9)
                samples.append(sample)
        write_dump(root / f"rollout_data_rank_{rank}.jsonl", samples,
                   extra=b"{broken line\n" if rank == 1 else b"")
    padded = make_sample(2, n=4, seed=77, acc=1.0)
    padded["response_tokens"] += ["<PAD>", "<PAD>"]
    html = make_sample(2, n=3, seed=78, response='<img src=x onerror="alert(1)">',
                       response_tokens=["<img src=x ", 'onerror="alert(1)"', ">"])
    with open(root / "rollout_data_rank_0.jsonl", "ab") as handle:
        handle.write(line_of(padded) + line_of(html))
    return root
