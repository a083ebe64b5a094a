"""What one growth of a followed long run costs, between two saves of its index.

    python benchmarks/bench_growth.py [--dir /tmp/rl-board-bench] [--shape long] [--times 3]

The shape's dump (bench_index.py's, generated once) is copied to a scratch dir and indexed;
then, --times over, each rank file gains one step's 128 lines (its own last ones, written
again) and the run held in memory is grown as the Follow toggle grows it between saves
(loaders.serve.grow.grown, save=False).  Prints each growth's seconds and the rows added.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from bench_index import made  # noqa: E402

from loaders.serve.grow import grown  # noqa: E402
from loaders.serve.open_run import open_run  # noqa: E402

LINES = 128  # a rank's samples a step in the long-run shape


def append_a_step(root: Path) -> None:
    for path in sorted(root.glob("*.jsonl")):
        with open(path, "rb") as handle:
            handle.seek(max(0, path.stat().st_size - (4 << 20)))
            tail = handle.read().split(b"\n")[1:-1][-LINES:]
        with open(path, "ab") as handle:
            handle.write(b"\n".join(tail) + b"\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/rl-board-bench"))
    parser.add_argument("--shape", default="long")
    parser.add_argument("--times", type=int, default=3)
    args = parser.parse_args()
    source = made(args.dir, args.shape)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "run"
        shutil.copytree(source, root, ignore=shutil.ignore_patterns(".*"))
        run = open_run(root)
        print(f"{args.shape}: {len(run.samples):,} samples indexed")
        for _ in range(args.times):
            append_a_step(root)
            start = time.perf_counter()
            now = grown(run, save=False)
            print(f"growth of {len(now.samples) - len(run.samples):,} rows: "
                  f"{time.perf_counter() - start:.2f} s ({now.cache})", flush=True)
            run = now


if __name__ == "__main__":
    main()
