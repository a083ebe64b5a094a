"""Seeded training-metric logs in verl's file-logger format, for the demo and benchmarks.

    python samples/generate_metrics.py OUT.jsonl --steps 12 [--seed 7] [--spike STEP]

Lines are {"step": N, "data": {...}} with actor/critic/timing/memory/perf metrics of a calm
run; --spike injects a divergence (KL and grad-norm spike, entropy collapse) at STEP.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import orjson


def metrics_rows(steps: int, seed: int = 7, spike: int | None = None) -> list[dict]:
    """One dict of metrics per step (1-based steps)."""
    rng = np.random.default_rng(seed)
    rows = []
    for step in range(1, steps + 1):
        e = rng.normal(0, 1, 10)
        row = {
            "actor/ppo_kl": 0.004 + 0.0004 * step + 0.0003 * e[0],
            "actor/grad_norm": 0.8 + 0.04 * e[1], "actor/entropy": 1.2 - 0.01 * step + 0.01 * e[2],
            "actor/pg_clipfrac": 0.02 + 0.002 * e[3], "actor/pg_loss": -0.01 + 0.005 * e[4],
            "critic/score/mean": 0.2 + 0.05 * step + 0.02 * e[5],
            "response_length/mean": 60 + 2 * step + 3 * e[6],
            "perf/total_num_tokens": 900 + 30 * step + 20 * e[7],
            "perf/max_memory_allocated_gb": 40 + 0.2 * e[8],
            "perf/max_memory_reserved_gb": 48 + 0.2 * e[9], "perf/memory_total_gb": 80.0,
            "timing_s/gen": 20 + e[0], "timing_s/reward": 2 + 0.1 * e[1],
            "timing_s/old_log_prob": 3 + 0.1 * e[2], "timing_s/ref": 3 + 0.1 * e[3],
            "timing_s/adv": 0.3, "timing_s/update_actor": 12 + 0.5 * e[4],
            "timing_s/save_checkpoint": 8.0 if step % 5 == 0 else 0.0,
        }
        if step == spike:
            row.update({"actor/ppo_kl": 0.2, "actor/grad_norm": 9.0, "actor/entropy": 0.2})
        rows.append({k: round(float(v), 6) for k, v in row.items()})
    return rows


def write_metrics(path: str | Path, steps: int, seed: int = 7, spike: int | None = None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [orjson.dumps({"step": i + 1, "data": row})
             for i, row in enumerate(metrics_rows(steps, seed, spike))]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--spike", type=int, default=None)
    args = parser.parse_args()
    print(write_metrics(args.out, args.steps, args.seed, args.spike))


if __name__ == "__main__":
    main()
