"""Compare runs on three long runs: the server's memory and the page's first paint.

    RL_BOARD_CHROMIUM=/usr/bin/chromium python benchmarks/bench_compare_memory.py \\
        [--dir /tmp/rl-board-bench/compare] [--steps 1000] [--runs 3]

Makes --runs runs of the long-run shape (`samples/generate_dump.py --long-run`, one seed
each, 1,024 samples a step) as sub-runs of --dir, once, and indexes each.  Then the real
server on --dir; the Compare runs page opened on all of them in a fresh Chromium (their
indexes reopened), timed until idle; and the resident memory of the server's process tree.
Issue 21's goal with three runs of 1,024,000 samples: at most 1 GB.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT), str(ROOT / "benchmarks")]

from bench_browser import settle  # noqa: E402
from bench_first_paint import SETTLE  # noqa: E402
from bench_serve_memory import server_pid  # noqa: E402
from browser import browser_page, served  # noqa: E402
from rss import tree_rss  # noqa: E402

NAMES = "abcdefgh"
CHARTS = ("document.querySelectorAll(\"[data-testid='stMain'] [data-testid='stVegaLiteChart'] "
          "canvas\").length >= 4")


def made(top: Path, steps: int, runs: int) -> list[str]:
    names = [f"run_{NAMES[i]}" for i in range(runs)]
    for seed, name in enumerate(names, start=3):
        out = top / name
        if not (out / ".done").exists():
            subprocess.run([sys.executable, str(ROOT / "samples" / "generate_dump.py"),
                            str(out), "--long-run", "--steps", str(steps), "--seed", str(seed)],
                           check=True, stdout=subprocess.DEVNULL)
            subprocess.run([sys.executable, "-m", "loaders", str(out), "--json"], check=True,
                           cwd=ROOT, stdout=subprocess.DEVNULL)
            (out / ".done").touch()
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/rl-board-bench/compare"))
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    names = made(args.dir, args.steps, args.runs)
    with served(args.dir, timeout=1800) as url:
        pid = server_pid(url)
        print(f"server started: {tree_rss(pid) / 2**20:,.0f} MB resident")
        # the sidebar on the first run: the dump dir itself would be all of them as one run
        query = urlencode([("run", names[0])] + [("runs", name) for name in names])
        for attempt in ("first (runs opened from their indexes)", "again (runs held)"):
            seconds, nodes = drawn(f"{url}/runs?{query}")
            print(f"Compare runs, {len(names)} runs of {args.steps * 1024:,} samples, {attempt}:"
                  f" first paint {seconds:.2f} s, {nodes} DOM nodes, server "
                  f"{tree_rss(pid) / 2**20:,.0f} MB resident", flush=True)


def drawn(url: str) -> tuple[float, int]:
    """The page opened in a fresh browser, timed until idle with its step charts drawn
    (idle alone can come while the runs still load: their charts are what the page is for),
    from the navigation on, as bench_first_paint times a page: not the browser's start."""
    with browser_page() as page:
        start = time.perf_counter()
        page.goto(url)
        page.wait_for_function(CHARTS, timeout=600_000)
        settle(page, "Compare runs")
        seconds = time.perf_counter() - start - SETTLE  # settle's own wait for a late run
        return seconds, page.evaluate("document.querySelectorAll('*').length")


if __name__ == "__main__":
    main()
