"""The same samples as a JSONL dump and as the board's Parquet dump, side by side.

    python benchmarks/bench_parquet.py [--dir benchmarks/out/pq] [--steps 2 --ranks 2
        --samples-per-rank 256 --max-tokens 8192] [--seed 0]

Generates the JSONL dump, converts it (`python -m loaders convert`, peak RSS measured), then
measures: size on disk; the JSONL parse limit (/work/shared/bench/parse_limit.py, or
benchmarks/parse_limit.py's copy); the cold index of each (`python -m loaders DIR --json
--no-cache`, wall time less the interpreter's start); one sample's load from each (median
over 25 samples spread over the run); and the writer's cost per sample in a trainer's loop
(DumpWriter.write of numpy arrays, close() included) for format="jsonl" and "parquet".
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "samples"), str(ROOT / "benchmarks")]

from driver import loader, parse_limit, start_up, timed_child  # noqa: E402
from generate_dump import make_batch, make_world, write_dump  # noqa: E402

from loaders import open_run  # noqa: E402
from loaders import schema as S  # noqa: E402
from loaders.writer import DumpWriter  # noqa: E402

REPEAT = 3


def dir_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()
               and ".rl_board_cache" not in p.parts)


def warm(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            path.read_bytes()


def cold_index(root: Path, start_s: float) -> tuple[float, float, dict]:
    """(wall less the interpreter's start, the loader's own seconds, its summary): the best
    of REPEAT runs."""
    runs = []
    for _ in range(REPEAT):
        info, wall, _ = loader(root, "--no-cache")
        runs.append((wall - start_s, info["seconds"], info))
    return min(runs, key=lambda run: run[1])


def sample_load(root: Path) -> float:
    run = open_run(root)
    keys = run.samples[S.KEY].tolist()[:: max(1, len(run.samples) // 25)]
    times = []
    for key in keys:
        run.store.clear()
        start = time.perf_counter()
        assert run.sample(key).error is None
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def writer_cost(tmp: Path, count: int, max_tokens: int) -> dict[str, float]:
    """Seconds per sample of DumpWriter.write (numpy arrays, as a trainer hands them)."""
    world = make_world(1, count, max_tokens, 10)
    batch = make_batch(world, np.random.default_rng(5), 3, count)
    out = {}
    for fmt in ("jsonl", "parquet"):
        shutil.rmtree(tmp / fmt, ignore_errors=True)
        start = time.perf_counter()
        with DumpWriter(tmp / fmt, rank=0, format=fmt) as writer:
            for sample in batch:
                writer.write(sample)
        out[fmt] = (time.perf_counter() - start) / count
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=ROOT / "benchmarks" / "out" / "pq")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--samples-per-rank", type=int, default=256)
    parser.add_argument("--max-tokens", type=int, default=8192)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    jsonl, parquet = args.dir / "jsonl", args.dir / "parquet"
    shutil.rmtree(args.dir, ignore_errors=True)
    write_dump(jsonl, args.steps, args.ranks, args.samples_per_rank, args.max_tokens, args.seed)
    _, convert_s, convert_rss = timed_child([sys.executable, "-m", "loaders", "convert",
                                           str(jsonl), str(parquet)])
    warm(jsonl)
    warm(parquet)
    start_s = start_up(repeat=REPEAT)
    r = {"jsonl_bytes": dir_bytes(jsonl), "parquet_bytes": dir_bytes(parquet),
         "convert_s": convert_s, "convert_peak_rss": convert_rss, "start_s": start_s,
         "parse_limit_s": parse_limit(jsonl, REPEAT)}
    r["jsonl_cold_s"], r["jsonl_cold_inproc_s"], info = cold_index(jsonl, start_s)
    r["parquet_cold_s"], r["parquet_cold_inproc_s"], info_pq = cold_index(parquet, start_s)
    assert info["samples"] == info_pq["samples"], (info["samples"], info_pq["samples"])
    r["samples"] = info["samples"]
    r["jsonl_sample_s"], r["parquet_sample_s"] = sample_load(jsonl), sample_load(parquet)
    cost = writer_cost(args.dir / "writer", 256, args.max_tokens)
    r["writer_jsonl_s"], r["writer_parquet_s"] = cost["jsonl"], cost["parquet"]
    report(r)
    (ROOT / "benchmarks" / "out").mkdir(parents=True, exist_ok=True)
    (ROOT / "benchmarks" / "out" / "bench_parquet.json").write_bytes(
        orjson.dumps(r, option=orjson.OPT_INDENT_2))


def report(r: dict) -> None:
    print(f"{r['samples']} samples; JSONL {r['jsonl_bytes'] / 1e6:,.0f} MB, Parquet "
          f"{r['parquet_bytes'] / 1e6:,.0f} MB ({r['jsonl_bytes'] / r['parquet_bytes']:.1f}x "
          "smaller; goal >= 5x)")
    print(f"convert: {r['convert_s']:.1f} s, peak RSS {r['convert_peak_rss'] / 1e6:.0f} MB")
    print(f"JSONL parse limit: {r['parse_limit_s']:.2f} s")
    print(f"cold index, JSONL: {r['jsonl_cold_inproc_s']:.2f} s in the loader "
          f"({r['jsonl_cold_s']:.2f} s wall less start; "
          f"{r['jsonl_cold_inproc_s'] / r['parse_limit_s']:.2f}x the parse limit)")
    print(f"cold index, Parquet: {r['parquet_cold_inproc_s']:.2f} s in the loader "
          f"({r['parquet_cold_s']:.2f} s wall less start; "
          f"{r['parse_limit_s'] / r['parquet_cold_inproc_s']:.1f}x faster than the parse "
          "limit; goal >= 5x)")
    print(f"one sample's load: JSONL {r['jsonl_sample_s'] * 1e3:.1f} ms, Parquet "
          f"{r['parquet_sample_s'] * 1e3:.1f} ms (median)")
    print(f"writer, per sample: JSONL {r['writer_jsonl_s'] * 1e3:.2f} ms, Parquet "
          f"{r['writer_parquet_s'] * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
