"""The data-core fuzzer of tests/fuzz.py, run by hand for many seeds or a time budget.

    .venv/bin/python benchmarks/fuzz_long.py --seconds 120 --lines 200

Runs seeds start, start+1, ... until --seeds are done or --seconds have passed, whichever
comes first, and prints what the board kept and reported and every failure with the seed
that reproduces it (--start SEED --seeds 1 with the same --lines).  Exits 1 on a failure.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # loaders, and tests/fuzz.py with its conftest

import fuzz  # noqa: E402


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1_000_000, help="at most this many seeds")
    parser.add_argument("--seconds", type=float, default=120.0, help="time budget")
    parser.add_argument("--lines", type=int, default=200, help="lines per seed")
    parser.add_argument("--start", type=int, default=0, help="first seed")
    parser.add_argument("--share", type=float, default=0.5, help="share of lines mutated")
    parser.add_argument("--kinds", default=",".join(fuzz.MUTATIONS),
                        help="comma-separated mutation kinds (default: all)")
    return parser.parse_args()


def _one(seed: int, args: argparse.Namespace, kinds: tuple[str, ...],
         written: Counter) -> fuzz.Tally:
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        dump = fuzz.generate(Path(tmp) / "run", seed, args.lines, args.share, kinds)
        lines = [line for _, _, line in dump.lines()]
        written.update(lines=len(lines), mutated=sum(bool(line.mutation) for line in lines))
        return fuzz.check(dump, derived=True)


def _failure(seed: int, err: BaseException) -> str:
    """One line: the seed, the error and where it was raised."""
    frame = traceback.extract_tb(err.__traceback__)[-1]
    where = f"{Path(frame.filename).name}:{frame.lineno} in {frame.name}"
    first = (str(err).strip().splitlines() or [""])[0][:160]
    return f"seed {seed}: {type(err).__name__} at {where}: {first}"


def main() -> int:
    args = _args()
    # numpy warns on the non-finite values the fuzzer writes on purpose; failures are errors
    warnings.simplefilter("ignore", RuntimeWarning)
    kinds = tuple(k for k in args.kinds.split(",") if k)
    total, written, failures, causes = Counter(), Counter(), [], Counter()
    started = time.perf_counter()
    seed = args.start
    while seed < args.start + args.seeds and time.perf_counter() - started < args.seconds:
        try:
            total.update(asdict(_one(seed, args, kinds, written)))
        except Exception as err:  # every failure is a finding: report it and go on
            failures.append(_failure(seed, err))
            causes[failures[-1].split(": ", 1)[1].split(": ")[0]] += 1
        seed += 1
    seconds = time.perf_counter() - started
    print(f"seeds run   {seed - args.start} ({args.start}..{seed - 1}), {args.lines} lines "
          f"each, {args.share:.0%} mutated, kinds: {','.join(kinds)}")
    print(f"lines       {written['lines']} written, {written['mutated']} of them mutated")
    print(f"checked     {total['lines']} non-blank lines of the seeds that passed: kept "
          f"{total['kept']}, reported {total['reported']}, pending {total['pending']} "
          f"({total['undecided']} undecided by the oracle)")
    print(f"failures    {len(failures)}")
    for cause, count in causes.most_common():
        print(f"  {count:5d} x {cause}")
    for line in failures[:20]:
        print(f"  {line}")
    print(f"time        {seconds:.1f} s ({seconds / max(seed - args.start, 1) * 1000:.0f} ms "
          f"per seed)")
    if failures:
        print(f"reproduce   .venv/bin/python benchmarks/fuzz_long.py --lines {args.lines} "
              f"--start SEED --seeds 1")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
