"""First paint of two versions of the board, alternated: is a change faster in a browser?

    RL_BOARD_CHROMIUM=/usr/bin/chromium python benchmarks/bench_paint_pairs.py \\
        --before TREE --after TREE [--dir DUMP_DIR] [--rounds 6] ROUTE:HEADING ...

TREE is a checkout of the board (`git worktree add /tmp/before REV`, with the after tree's
.venv linked in and its native kernel copied).  Both trees' start.sh serve the same dump at
once; each round opens every ROUTE (a path with its query, e.g. `sample?step=999`) in a
fresh browser on one server and then on the other, timed as bench_first_paint.py times a
fresh open (until HEADING is drawn and the page is idle).  The machine's speed drifts by a
third within an hour here: alternating the two in one run is what makes them comparable.
Prints each round and the median, the fastest open and the DOM nodes of each.
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT), str(ROOT / "benchmarks")]

from bench_first_paint import open_fresh, server_at  # noqa: E402


def serving(tree: Path, dump: Path) -> contextlib.AbstractContextManager[str]:
    """`bash TREE/start.sh DUMP` on a free port; its URL once healthy."""
    return server_at(lambda port: ["bash", str(tree / "start.sh"), str(dump), "--server.port",
                                   str(port), "--server.address", "127.0.0.1"], 600)


def rounds(urls: list[str], pages: list[tuple[str, str]], count: int
           ) -> dict[tuple[str, int], list[tuple[float, int]]]:
    """(route, version) -> [(seconds, DOM nodes)] over `count` alternated rounds, after one
    unmeasured open of each (the index built, the server warm)."""
    for url in urls:
        for route, heading in pages:
            open_fresh(f"{url}/{route}", heading, None, "")
    times: dict[tuple[str, int], list[tuple[float, int]]] = {}
    for _ in range(count):
        row = []
        for route, heading in pages:
            for version, url in enumerate(urls):
                seconds, nodes = open_fresh(f"{url}/{route}", heading, None, "")
                times.setdefault((route, version), []).append((seconds, nodes))
                row.append(f"{route.split('?')[0]} {('before', 'after')[version]} {seconds:.2f}")
        print(" | ".join(row), flush=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=ROOT)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/rl-board-bench/long"))
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("pages", nargs="+", help="ROUTE:HEADING, e.g. 'sample?step=999:Sample'")
    args = parser.parse_args()
    pages = [tuple(page.split(":", 1)) for page in args.pages]
    with serving(args.before, args.dir) as before, serving(args.after, args.dir) as after:
        times = rounds([before, after], pages, args.rounds)
    for (route, version), opens in times.items():
        seconds = [s for s, _ in opens]
        print(f"{route:30s} {('before', 'after')[version]:6s} median "
              f"{statistics.median(seconds):.2f} s, fastest {min(seconds):.2f} s, "
              f"{opens[-1][1]:,} DOM nodes")


if __name__ == "__main__":
    main()
