"""Data-core benchmark: parse limit, cold load, reopen, growth and token arrays, side by side.

    python benchmarks/bench_load.py [--dir benchmarks/out/dump] [--steps 100 --ranks 8
        --samples-per-rank 32 --max-tokens 1024] [--seed 0]

Generates the dump when the dir is empty, then measures every figure in one run and prints
each with its target ratio.  The page cache is warmed first so both sides read from memory.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "samples"), str(ROOT / "benchmarks")]

from driver import loader  # noqa: E402
from generate_dump import write_dump  # noqa: E402
from parse_limit import chunks_of, parse_all  # noqa: E402

from loaders import open_run  # noqa: E402
from loaders import schema as S  # noqa: E402
from loaders.find.walk import discover  # noqa: E402


def dump_bytes(root: Path) -> int:
    return sum(f.path.stat().st_size for f in discover(root))


def warm(root: Path) -> None:
    for dump in discover(root):
        with open(dump.path, "rb") as handle:
            while handle.read(64 << 20):
                pass


def timed(fn, *args):
    start = time.perf_counter()
    value = fn(*args)
    return time.perf_counter() - start, value


def token_figures(root: Path, step: int) -> dict:
    run = open_run(root)
    map_s, _ = timed(lambda: run.store.locations)
    keys = run.samples[S.KEY].tolist()[:: max(1, len(run.samples) // 25)]
    one = []
    for key in keys:
        run.store.clear()
        one.append(timed(run.sample, key)[0])
    run.store.clear()
    step_seconds, samples = timed(run.step_samples, step)
    return {"location_map_s": map_s,
            "sample_median_s": statistics.median(one), "sample_max_s": max(one),
            "step_s": step_seconds, "step_samples": len(samples)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=ROOT / "benchmarks" / "out" / "dump")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--samples-per-rank", type=int, default=32)
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    root = args.dir
    shutil.rmtree(root, ignore_errors=True)
    gen_s, _ = timed(write_dump, root, args.steps, args.ranks, args.samples_per_rank,
                     args.max_tokens, args.seed)
    size = dump_bytes(root)
    print(f"dump: {size / 1e9:.2f} GB in {root} (generated in {gen_s:.0f}s)")
    warm(root)
    limit_s, lines = timed(parse_all, chunks_of(root))
    cold, cold_wall, cold_rss = loader(root)
    hit, _, _ = loader(root)
    sizes = {f.rel: f.path.stat().st_size for f in discover(root)}
    write_dump(root, 1, args.ranks, args.samples_per_rank, args.max_tokens, args.seed,
               start_step=args.steps, append=True)
    warm(root)
    new_bytes = dump_bytes(root) - size
    new_s, _ = timed(parse_all, chunks_of(root, sizes))
    grown, _, _ = loader(root)
    tokens = token_figures(root, args.steps // 2)
    results = {
        "dump_bytes": size, "lines": lines, "samples": cold["samples"],
        "parse_limit_s": limit_s, "cold_s": cold["seconds"], "cold_wall_s": cold_wall,
        "cold_peak_rss_bytes": cold_rss, "reopen_s": hit["seconds"], "reopen_cache": hit["cache"],
        "growth_bytes": new_bytes, "growth_parse_limit_s": new_s, "growth_s": grown["seconds"],
        "growth_cache": grown["cache"], **tokens,
    }
    report(results)
    out = ROOT / "benchmarks" / "out" / "bench_load.json"
    out.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))


def report(r: dict) -> None:
    rows = [
        ("parse limit (bare orjson, 2 cores)", f"{r['parse_limit_s']:.1f} s", "reference", ""),
        ("cold load", f"{r['cold_s']:.1f} s", f"{r['cold_s'] / r['parse_limit_s']:.2f}x limit",
         "<= 1.30x"),
        ("cold load peak RSS (process tree)", f"{r['cold_peak_rss_bytes'] / 1e6:.0f} MB",
         f"{r['cold_peak_rss_bytes'] / r['dump_bytes']:.2f}x dump", "<= 0.30x"),
        ("reopen (unchanged)", f"{r['reopen_s']:.2f} s ({r['reopen_cache']})",
         f"{r['reopen_s']:.2f} s", "<= 1 s"),
        (f"growth (+{r['growth_bytes'] / 1e6:.0f} MB)",
         f"{r['growth_s']:.2f} s ({r['growth_cache']})",
         f"{r['growth_s'] / (2 * r['growth_parse_limit_s'] + 1):.2f}x (2*parse+1s)", "<= 1.00x"),
        ("key -> offset map (once per loaded run)", f"{r['location_map_s'] * 1e3:.0f} ms", "",
         ""),
        ("one sample's token arrays", f"{r['sample_median_s'] * 1e3:.1f} ms median, "
         f"{r['sample_max_s'] * 1e3:.1f} ms max", f"{r['sample_max_s'] / 0.01:.2f}x 10 ms", "<= 1"),
        (f"one step's token arrays ({r['step_samples']})", f"{r['step_s']:.3f} s",
         f"{r['step_s'] / 0.5:.2f}x 0.5 s", "<= 1"),
    ]
    for name, value, ratio, target in rows:
        print(f"{name:40s} {value:32s} {ratio:28s} {target}")


if __name__ == "__main__":
    main()
