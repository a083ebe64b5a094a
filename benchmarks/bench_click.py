"""What a widget click costs the data layer, for a dir of 10 and of 10,000 tiny dump files.

    python benchmarks/bench_click.py [--files 10 10000] [--clicks 200] [--dir DIR]

A click asks for the sub-run list, the chosen run and its health (server side, no UI).
After the first load the Catalog answers from memory, so the figure should not grow with
the file count.  For contrast, the per-click disk work of the previous board (walk and peek
for the sub-runs, walk and stat every dump for the cache key, walk for the metric files and
stat them) is timed on the same dir.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from loaders.find.walk import discover, dump_dirs, stat_fingerprint  # noqa: E402
from loaders.metrics.collect import find_metric_files, metrics_fingerprint  # noqa: E402
from loaders.serve.catalog import Catalog  # noqa: E402

SUB_RUNS = 10


def write_tiny_dump(base: Path, files: int) -> Path:
    """files one-sample dumps spread over SUB_RUNS sub-runs, plus a metrics log."""
    for i in range(files):
        sub = base / f"exp_{i % SUB_RUNS}"
        sub.mkdir(parents=True, exist_ok=True)
        sample = {"step": i // SUB_RUNS // 8, "prompt": f"q{i}", "response": "a", "reward": 0.5}
        (sub / f"rollout_data_rank_{i // SUB_RUNS}.jsonl").write_bytes(
            orjson.dumps(sample) + b"\n")
    lines = [orjson.dumps({"step": s, "data": {"actor/ppo_kl": 0.01 * s}}) for s in range(20)]
    (base / "exp_0" / "metrics.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return base


def median_ms(action: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def old_click(base: Path, run_dir: Path) -> None:
    """The disk work main did on every click before the Catalog (the data layer only)."""
    dump_dirs(base)
    stat_fingerprint((d.rel, d.path) for d in discover(run_dir))
    metrics_fingerprint(find_metric_files(run_dir))


def measure(base: Path, files: int, clicks: int) -> tuple[float, float, float]:
    write_tiny_dump(base, files)
    catalog = Catalog(base)
    run_dir = base / "exp_0"

    def click() -> None:
        catalog.sub_runs()
        catalog.run(run_dir).health()

    started = time.perf_counter()
    click()
    first = time.perf_counter() - started
    return first, median_ms(click, clicks), median_ms(lambda: old_click(base, run_dir), 5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, nargs="+", default=[10, 10_000])
    parser.add_argument("--clicks", type=int, default=200)
    parser.add_argument("--dir", type=Path, help="where to write the dumps (default: a temp dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        print(f"{'files':>7} {'first load':>11} {'click (now)':>12} {'click (before)':>15}")
        for files in args.files:
            first, now, before = measure(Path(scratch) / f"d{files}", files, args.clicks)
            print(f"{files:>7,} {first:>10.2f}s {now:>10.3f}ms {before:>13.1f}ms")


if __name__ == "__main__":
    main()
