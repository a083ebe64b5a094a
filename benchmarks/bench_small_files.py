"""Many small dump files, and one very wide line: cold load and reopen through the CLI.

    python benchmarks/bench_small_files.py [--dir benchmarks/out/small] [--files 10000]
        [--lines 2] [--wide-keys 200000]

Writes FILES files rollout_data_rank_{i}.jsonl of LINES short samples each (per-file costs
dominate), then times `python -m loaders DIR --json` cold (no index), reopened (a hit) and
with --no-cache, each in a fresh process, with the peak RSS of its process tree.  With
--wide-keys it does the same for a dir of one file whose middle line has that many distinct
extra keys.  The page cache is warm: the files were just written.
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import numpy as np
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks")]

from driver import loader  # noqa: E402

TARGET_COLD_S = 5.0


def sample(step: int, seed: int, tokens: int = 8) -> dict:
    rng = np.random.default_rng(seed * 1000 + step)
    return {"step": step, "prompt": f"Question {seed}: what is {step} + {tokens}?",
            "response": "".join(f" t{i}" for i in range(tokens)),
            "response_tokens": [f" t{i}" for i in range(tokens)],
            "logprobs": (-rng.random(tokens)).tolist(),
            "ref_logprobs": (-rng.random(tokens)).tolist(),
            "values": rng.random(tokens).tolist(),
            "token_rewards": [0.0] * (tokens - 1) + [1.0],
            "reward": float(rng.random()), "ref_reward": 0.25}


def write_small(root: Path, files: int, lines: int) -> int:
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    total = 0
    for i in range(files):
        data = b"".join(orjson.dumps(sample(s, i)) + b"\n" for s in range(lines))
        (root / f"rollout_data_rank_{i}.jsonl").write_bytes(data)
        total += len(data)
    return total


def write_wide(root: Path, keys: int) -> int:
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    wide = {**sample(1, 0), **{f"extra_key_{i:06d}": i * 0.5 for i in range(keys)}}
    data = b"".join(orjson.dumps(obj) + b"\n" for obj in (sample(0, 0), wide, sample(2, 0)))
    (root / "rollout_data_rank_0.jsonl").write_bytes(data)
    return len(data)


def measure(root: Path, label: str) -> None:
    shutil.rmtree(root / ".rl_board_cache", ignore_errors=True)
    for name, flags in (("cold load", ()), ("reopen", ()), ("reopen", ()),
                        ("--no-cache", ("--no-cache",))):
        info, wall, peak = loader(root, *flags)
        print(f"{label:<12} {name:<11} {info['seconds']:6.2f} s in the loader, {wall:6.2f} s "
              f"wall, peak RSS {peak / 2**20:6.0f} MB  (cache {info['cache']}, "
              f"{info['samples']} samples, {info['problems_total']} problems)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=ROOT / "benchmarks" / "out" / "small")
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--lines", type=int, default=2)
    parser.add_argument("--wide-keys", type=int, default=0)
    args = parser.parse_args()
    size = write_small(args.dir, args.files, args.lines)
    print(f"{args.files:,} files x {args.lines} lines, {size / 2**20:.1f} MB in {args.dir} "
          f"(target: cold load <= {TARGET_COLD_S:.0f} s wall)")
    measure(args.dir, f"{args.files:,} files")
    if args.wide_keys:
        wide_dir = args.dir.with_name(args.dir.name + "_wide")
        size = write_wide(wide_dir, args.wide_keys)
        print(f"one line of {args.wide_keys:,} keys, {size / 2**20:.1f} MB in {wide_dir}")
        measure(wide_dir, "wide line")


if __name__ == "__main__":
    main()
