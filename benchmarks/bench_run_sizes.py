"""How a long run's cost grows with its size: four sizes of the long-run shape, 128k to 1M.

    RL_BOARD_CHROMIUM=/usr/bin/chromium python benchmarks/bench_run_sizes.py \\
        [--dir /tmp/rl-board-bench/sizes] [--steps 125,250,500,1000]

Each size is `samples/generate_dump.py --long-run --steps N` (N x 1,024 samples of <= 16
tokens, 20,000 prompts in groups of 8), made once under --dir.  For each: the index is built
(`python -m loaders DIR --json`), then the reopen in a fresh process (wall time less the
interpreter's start, peak RSS of its tree), then the real server on the reopened index
(bench_serve_memory.serve_memory: resident MB after the load and with every page visited,
the slowest first paint in a fresh Chromium, Prompts against Responses, the step change on
Responses).  Last, a straight-line fit of the server's memory against samples, and what a
run of 8.2 million samples (1,000 steps x 8,192) would need by it.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT), str(ROOT / "benchmarks")]

from bench_serve_memory import serve_memory  # noqa: E402
from driver import loader, start_up  # noqa: E402

SAMPLES_PER_STEP = 8 * 128
REAL_RUN = 1000 * 8192  # a run of 1,000 steps of 8,192 samples


def made(top: Path, steps: int) -> Path:
    out = top / f"long-{steps}"
    if not (out / ".done").exists():
        subprocess.run([sys.executable, str(ROOT / "samples" / "generate_dump.py"), str(out),
                        "--long-run", "--steps", str(steps)], check=True,
                       stdout=subprocess.DEVNULL)
        (out / ".done").touch()
    return out


def measure(root: Path, start_s: float) -> dict:
    loader(root)  # builds (or keeps) the index
    _, wall, rss = loader(root)
    found = serve_memory(root, show=False)
    return {"reopen_s": wall - start_s, "reopen_mb": rss / 2**20, **found}


def line(samples: int, r: dict) -> str:
    paints = {name: seconds for name, (seconds, _) in r["pages"].items()}
    slowest = max(paints, key=paints.get)
    return (f"{samples:>9,} | {r['reopen_s']:5.2f} s {r['reopen_mb']:6,.0f} MB | "
            f"{r['loaded_mb']:6,.0f} MB {r['visited_mb']:6,.0f} MB | "
            f"{paints[slowest]:4.1f} s ({slowest}) | {paints['prompts']:4.1f} / "
            f"{paints['responses']:4.1f} s | {max(r['step_changes']):4.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/rl-board-bench/sizes"))
    parser.add_argument("--steps", default="125,250,500,1000")
    args = parser.parse_args()
    start_s = start_up()
    sizes = [int(s) for s in args.steps.split(",")]
    print("  samples | reopen (fresh process) | server: loaded, every page | slowest first "
          "paint | Prompts / Responses | step change (max of 6)")
    results = {}
    for steps in sizes:
        samples = steps * SAMPLES_PER_STEP
        results[samples] = measure(made(args.dir, steps), start_s)
        print(line(samples, results[samples]), flush=True)
    if len(results) >= 2:
        xs = np.array(list(results), dtype=float)
        for what in ("reopen_mb", "visited_mb"):
            slope, base = np.polyfit(xs, [r[what] for r in results.values()], 1)
            print(f"{what}: {base:,.0f} MB + {slope * 1e6:,.0f} MB per million samples "
                  f"-> {base + slope * REAL_RUN:,.0f} MB at {REAL_RUN:,} samples")


if __name__ == "__main__":
    main()
