"""Training-metric logs in each source's format, healthy or with injected faults."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import orjson

STEPS = 60
FAULTS = {"divergence": 30, "grad_only": 20, "abort": 35, "memory": 44, "runaway": 50,
          "hacking": 56}
PERSIST = 3  # steps the abort, runaway and hacking faults hold


def healthy(steps: int = STEPS, seed: int = 0) -> list[dict]:
    """Per-step metrics of a calm run: small noise around slow trends."""
    rng = np.random.default_rng(seed)
    rows = []
    for step in range(1, steps + 1):
        noise = rng.normal(0, 1, 12)
        rows.append({
            "actor/ppo_kl": 0.010 + 0.0005 * noise[0], "actor/grad_norm": 1.0 + 0.05 * noise[1],
            "actor/entropy": 1.5 - 0.002 * step + 0.02 * noise[2],
            "critic/score/mean": 0.2 + 0.005 * step + 0.01 * noise[3],
            "response_length/mean": 300 + 5 * noise[4],
            "perf/total_num_tokens": 40_000 + 500 * noise[5],
            "rollout/abort_ratio": 0.002 + 0.0002 * abs(noise[6]),
            "perf/max_memory_allocated_gb": 60 + 0.3 * noise[7],
            "perf/max_memory_reserved_gb": 66 + 0.3 * noise[8], "perf/memory_total_gb": 80.0,
            "timing_s/gen": 30 + noise[9], "timing_s/ref": 5 + 0.2 * noise[10],
            "timing_s/update_actor": 20 + noise[11], "timing_s/adv": 0.5,
            "timing_s/step": 56 + noise[9] + noise[11]})
    return [{key: float(value) for key, value in row.items()} for row in rows]


def faulty(steps: int = STEPS) -> list[dict]:
    """The healthy run with one fault of each kind injected at FAULTS' steps."""
    rows = healthy(steps)
    at = {name: rows[step - 1] for name, step in FAULTS.items()}
    at["divergence"].update({"actor/ppo_kl": 0.25, "actor/grad_norm": 12.0,
                             "actor/entropy": 0.3})
    at["grad_only"]["actor/grad_norm"] = 9.0  # one step, one signal: weak
    for offset, step in enumerate(range(FAULTS["memory"] - 3, FAULTS["memory"] + 1)):
        rows[step - 1]["perf/max_memory_reserved_gb"] = 76 + offset
    for held in range(PERSIST):  # faults that hold for a few steps, as real ones do
        rows[FAULTS["abort"] - 1 + held]["rollout/abort_ratio"] = 0.3
        rows[FAULTS["runaway"] - 1 + held]["perf/total_num_tokens"] = 130_000
    for offset, step in enumerate(range(FAULTS["hacking"] - 8, FAULTS["hacking"] + PERSIST)):
        rows[step - 1]["critic/score/mean"] += 0.05 * offset
    for held in range(PERSIST):
        rows[FAULTS["hacking"] - 1 + held]["response_length/mean"] = 1500
    return rows


def write_verl_file(path: Path, rows: list[dict]) -> Path:
    lines = [orjson.dumps({"step": i + 1, "data": row}) for i, row in enumerate(rows)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def write_verl_console(path: Path, rows: list[dict]) -> Path:
    text = ["(main_task pid=123) Training Progress: 0%|          | 0/60"]
    text += [f"(main_task pid=123) step:{i + 1} - " + " - ".join(
        f"{k}:{v:.6g}" for k, v in row.items()) for i, row in enumerate(rows)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(text) + "\n")
    return path


def write_roll_log(path: Path, rows: list[dict]) -> Path:
    text = [f"[2026-11-21 10:00:{i % 60:02d}] [INFO] [tracker.py:42] metrics_tag: "
            + json.dumps({"step": i + 1, "metrics": row}) for i, row in enumerate(rows)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("INFO starting pipeline\n" + "\n".join(text) + "\n")
    return path


def write_prime(path: Path, rows: list[dict]) -> Path:
    lines = [orjson.dumps({"step": i + 1, "time": 1_700_000_000 + 60.0 * i, **row})
             for i, row in enumerate(rows)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def write_generic(path: Path, rows: list[dict]) -> Path:
    lines = [orjson.dumps({"global_step": i + 1, **{k.replace("/", "."): v
                                                     for k, v in row.items()}})
             for i, row in enumerate(rows)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path
