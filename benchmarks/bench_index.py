"""The cold index against the parse limit, on every shape the index-speed goals name.

    python benchmarks/bench_index.py [--dir /tmp/rl-board-bench] [--shapes medium,large,long,
        parquet] [--repeat 2] [--before CHECKOUT] [--own-clock]

Each shape is generated once (samples/generate_dump.py; `parquet` is `large` converted by
`python -m loaders convert`) and kept in DIR for the next run.  Per shape, interleaved and best
of --repeat, on a warm page cache: the parse limit (../shared/bench/parse_limit.py: bare
orjson over every line, every core) and the cold index (`python -m loaders DIR --json
--no-cache` in a fresh process, its wall time less the interpreter's start and imports, both
the best of the runs: the start-up is measured beside each),
with the peak RSS of its process tree.  Then the reopen (the stored index, a cache hit),
timed by its own main(), best of 3.
`real` (2 x 8 x 1,024 samples of up to 8,192 tokens, 7.6 GB) is left out unless named.
--before runs an earlier checkout's cold index beside each of this one's (make it with
`git worktree add /tmp/before REV`, and its kernel with its own scripts/build_kernel.py).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks")]

from driver import SHARED_LIMIT, parse_limit, start_up, timed_child  # noqa: E402

LIMIT = SHARED_LIMIT  # the yardstick of the goals: never this repo's copy
# name: (generate_dump.py arguments, goal as a multiple of the parse limit, RSS goal)
SHAPES = {
    "medium": ("--steps 50 --ranks 4 --samples-per-rank 32 --max-tokens 512", 1.3, None),
    "large": ("--steps 100 --ranks 8 --samples-per-rank 32 --max-tokens 1024", 1.2, "0.3x dump"),
    "long": ("--steps 1000 --ranks 8 --samples-per-rank 128 --max-tokens 16 --group-size 8 "
             "--prompts 20000", 1.5, "1 GB"),
    "real": ("--steps 2 --ranks 8 --samples-per-rank 1024 --max-tokens 8192", 1.2, "1 GB"),
}


def made(top: Path, name: str) -> Path:
    """The shape's dump dir, generated (or converted) the first time."""
    out = top / name
    if (out / ".done").exists():
        return out
    if name == "parquet":
        timed_child([sys.executable, "-m", "loaders", "convert", str(made(top, "large")), str(out)])
    else:
        timed_child([sys.executable, "samples/generate_dump.py", str(out), "--seed", "3",
             *SHAPES[name][0].split()])
    (out / ".done").touch()
    return out


def size_of(root: Path) -> int:
    return sum(p.stat().st_size for p in root.iterdir() if p.is_file() and p.name[0] != ".")


def warm(root: Path) -> None:
    for path in root.iterdir():
        if path.is_file():
            with open(path, "rb") as handle:
                while handle.read(64 << 20):
                    pass


# --own-clock: the child times its own main() (imports excluded by construction, not
# subtracted: on a loaded machine a separately measured start-up can be off by 0.3 s)
CLOCKED = ("import sys, time\nfrom loaders.__main__ import main\nt = time.perf_counter()\n"
           "code = main(sys.argv[1:])\nprint('\\n#main_s', time.perf_counter() - t)\n"
           "sys.exit(code)")


def cold_index(root: Path, cwd: Path, own_clock: bool) -> tuple[str, float, int]:
    """One cold index in a fresh process: its JSON, seconds (its own main()'s with
    own_clock, else the process's wall) and peak RSS."""
    if own_clock:
        out, _, peak = timed_child([sys.executable, "-c", CLOCKED, str(root), "--json",
                                    "--no-cache"], cwd)
        text, _, seconds = out.rpartition("\n#main_s ")
        return text, float(seconds), peak
    return timed_child([sys.executable, "-m", "loaders", str(root), "--json", "--no-cache"],
                       cwd)


def measure(root: Path, limit_root: Path, repeat: int, own_clock: bool,
            before: Path | None = None) -> dict:
    """`before`: another checkout, whose cold index runs interleaved with this one's (the
    same dumps, the same minutes of a machine whose speed drifts).  Without own_clock, each
    checkout's start-up is measured beside each of its runs, and the best start-up is taken
    from the best wall (one measured before them all read a drift of the machine as the
    index's: medium once at 0.80x)."""
    warm(root)
    warm(limit_root)
    limits, colds, peaks, earlier = [], [], [], []
    starts, earlier_starts = [], []
    for _ in range(repeat):
        limits.append(parse_limit(limit_root))
        if before:
            earlier.append(cold_index(root, before, own_clock)[1])
            earlier_starts.append(0.0 if own_clock else start_up(before, repeat=1))
        out, seconds, peak = cold_index(root, ROOT, own_clock)
        colds.append(seconds)
        peaks.append(peak)
        starts.append(0.0 if own_clock else start_up(repeat=1))
    samples = orjson.loads(out)["samples"]
    timed_child([sys.executable, "-m", "loaders", str(root), "--json"])  # stores the index
    reopen_s, reopen_rss = reopen(root)
    return {"samples": samples, "bytes": size_of(root), "limit_bytes": size_of(limit_root),
            "parse_limit_s": min(limits), "cold_s": min(colds) - min(starts),
            "peak_rss": min(peaks), "reopen_s": reopen_s, "reopen_rss": reopen_rss,
            "before_s": min(earlier) - min(earlier_starts) if earlier else None}


def reopen(root: Path, repeat: int = 3) -> tuple[float, int]:
    """The reopen (a cache hit) timed by its own main(), best of `repeat`, and its peak RSS:
    a start-up subtracted from one short run could come out below zero (the real shape's,
    16,384 samples, read -0.19 s once)."""
    runs = [timed_child([sys.executable, "-c", CLOCKED, str(root), "--json"])
            for _ in range(repeat)]
    return min(float(out.rpartition("\n#main_s ")[2]) for out, _, _ in runs), \
        min(peak for _, _, peak in runs)


def report(name: str, r: dict) -> str:
    goal, rss_goal = (SHAPES[name][1], SHAPES[name][2]) if name in SHAPES else (None, None)
    ratio = r["cold_s"] / r["parse_limit_s"]
    if name == "parquet":
        what = (f"{r['parse_limit_s'] / r['cold_s']:.2f}x faster than the JSONL parse limit "
                f"(goal >= 5x); file {r['limit_bytes'] / r['bytes']:.1f}x smaller (goal >= 5x)")
    else:
        what = f"{ratio:.2f}x the parse limit (goal <= {goal}x)"
    if r.get("before_s") and name == "parquet":
        what += f" (before: {r['before_s']:.2f} s = {r['parse_limit_s'] / r['before_s']:.2f}x)"
    elif r.get("before_s"):
        what += f" (before: {r['before_s']:.2f} s = {r['before_s'] / r['parse_limit_s']:.2f}x)"
    return (f"{name:8s} {r['samples']:>9,} samples {r['bytes'] / 1e6:>7,.0f} MB | parse limit "
            f"{r['parse_limit_s']:6.2f} s | cold index {r['cold_s']:6.2f} s = {what} | peak RSS "
            f"{r['peak_rss'] / 1e6:,.0f} MB = {r['peak_rss'] / r['limit_bytes']:.2f}x dump"
            f"{f' (goal {rss_goal})' if rss_goal else ''} | reopen {r['reopen_s']:.2f} s, "
            f"{r['reopen_rss'] / 1e6:,.0f} MB")


def compiled(tree: Path) -> None:
    """The checkout's bytecode written, as scripts/venv.sh writes it: where
    PYTHONDONTWRITEBYTECODE is set, a worktree without it compiles every module on every
    run (0.1-0.2 s a process), which would read as the code's own time."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", "loaders", "pages"], cwd=tree,
                   stdout=subprocess.DEVNULL, check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/rl-board-bench"))
    parser.add_argument("--shapes", default="medium,large,long,parquet")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--before", type=Path, help="another checkout (a git worktree of an "
                        "earlier commit): its cold index too, interleaved with this one's")
    parser.add_argument("--own-clock", action="store_true", help="time the cold index's "
                        "main() inside its process, not the process less a start-up")
    args = parser.parse_args()
    if not LIMIT.exists():
        raise SystemExit(f"the yardstick {LIMIT} is missing (../shared/bench beside the checkout)")
    print("the cold index's own main() timed" if args.own_clock else
          "the cold index: its process's wall less the interpreter's start and imports, each "
          f"the best of the shape's runs; yardstick {LIMIT}")
    before = args.before.resolve() if args.before else None
    for tree in filter(None, (ROOT, before)):
        compiled(tree)
    results = {}
    for name in args.shapes.split(","):
        root = made(args.dir, name)
        limit_root = made(args.dir, "large") if name == "parquet" else root
        results[name] = measure(root, limit_root, args.repeat, args.own_clock, before)
        print(report(name, results[name]), flush=True)
    out = ROOT / "benchmarks" / "out" / "bench_index.json"
    out.parent.mkdir(exist_ok=True)
    out.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
