"""What every benchmark that times the data core does: a fresh process, its wall time and
the peak resident memory of its process tree (rss.py), the loader's own JSON summary, the
interpreter's start-up to subtract, and the parse limit to divide by."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
from rss import PeakRss

ROOT = Path(__file__).resolve().parents[1]
# the yardstick of every load ratio (../shared/bench/parse_limit.py), or this repo's copy
SHARED_LIMIT = ROOT.parent / "shared" / "bench" / "parse_limit.py"
LIMIT = SHARED_LIMIT if SHARED_LIMIT.exists() else ROOT / "benchmarks" / "parse_limit.py"


def timed_child(args: list[str], cwd: Path = ROOT) -> tuple[str, float, int]:
    """stdout, wall seconds and peak RSS of the process tree of a child process."""
    import time

    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    with PeakRss(proc.pid) as rss:
        out, _ = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(map(str, args))}")
    return out.decode(), time.perf_counter() - start, rss.peak


def loader(root: Path, *flags: str, cwd: Path = ROOT) -> tuple[dict, float, int]:
    """`python -m loaders ROOT --json [flags]` in a fresh process: its summary, wall seconds
    and peak tree RSS."""
    out, wall, peak = timed_child([sys.executable, "-m", "loaders", str(root), "--json",
                                   *flags], cwd)
    return orjson.loads(out), wall, peak


# the imports, then an exit without the interpreter's teardown, as the CLI's own exit
# (loaders/__main__.finished): a plain exit's teardown of these modules (~0.09 s here) is no
# part of a start, and the CLI no longer pays it
_START_UP = "import os, loaders, loaders.__main__; os._exit(0)"


def start_up(cwd: Path = ROOT, repeat: int = 3) -> float:
    """The interpreter's start and the loader's imports: what a fresh process pays first."""
    return min(timed_child([sys.executable, "-c", _START_UP], cwd)[1] for _ in range(repeat))


def parse_limit(root: Path, repeat: int = 1) -> float:
    """The parse limit of root's dump (bare orjson over every line, every core), best of
    `repeat`: the machine is shared, so the least disturbed run counts."""
    runs = [timed_child([sys.executable, str(LIMIT), str(root)])[0] for _ in range(repeat)]
    return min(float(out.split("parse_limit_s=")[1].split()[0]) for out in runs)
