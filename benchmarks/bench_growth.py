"""What one growth of a followed long run costs, between two saves of its index.

    python benchmarks/bench_growth.py [--dir /tmp/rl-board-bench] [--shape long] [--times 3]

The shape's dump (bench_index.py's, generated once) is copied to a scratch dir and indexed;
then, --times over, each rank file gains one step's 128 lines (its own last ones, written
again) and the run held in memory is grown as the Follow toggle grows it between saves
(loaders.serve.grow.grown, save=False).  Prints each growth's seconds, the rows added, the
rows held in memory (a followed run holds its last steps' rows: loaders.index.grown_columns)
and the process's RSS.
"""
from __future__ import annotations

import argparse
import gc
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
        print(f"{args.shape}: {run.numbers.size:,} samples indexed, RSS {_rss_mb()} MB")
        for _ in range(args.times):
            append_a_step(root)
            start = time.perf_counter()
            now = grown(run, save=False)
            took = time.perf_counter() - start
            print(f"growth of {now.numbers.size - run.numbers.size:,} rows: {took:.2f} s "
                  f"({now.cache}); rows held {_held(now):,}, RSS {_rss_mb()} MB", flush=True)
            run = now


def _held(run) -> int:  # noqa: ANN001 - a served Run
    """The rows the run holds in memory (the rest are read from its index file)."""
    if run.numbers.held is not None:
        return len(run.numbers.held)
    tail = getattr(run.numbers.file, "tail", None)
    return 0 if tail is None else len(tail)


def _rss_mb() -> int:
    gc.collect()
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS"))
    return int(line.split()[1]) // 1024


if __name__ == "__main__":
    main()
