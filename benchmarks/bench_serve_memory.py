"""The board's server memory with a run open, and each page's first paint, in Chromium.

    RL_BOARD_CHROMIUM=/usr/bin/chromium python benchmarks/bench_serve_memory.py DUMP_DIR \\
        [--step S]

Starts the real server (start.sh) on DUMP_DIR and opens the board once, so the run is
indexed and loaded.  Then every route is opened by its link in a fresh browser (no cache, no
session) and timed until idle (bench_first_paint.open_fresh); the resident memory of the
server's process tree is read after the load and after every page was visited.  Issue 21's
goals on the long-run dump (1,024,000 samples): ≤ 500 MB with every page visited, ≤ 3 s a
first paint, Prompts no slower than Responses, and a step change on Responses ≤ 1 s (the
sidebar's step slider moved by key, from the press until the page is idle).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT), str(ROOT / "benchmarks")]

from bench_first_paint import last_step, open_fresh, step_changes  # noqa: E402
from browser import served  # noqa: E402
from rss import tree_rss  # noqa: E402

from pages.routes import ROUTES  # noqa: E402


def server_pid(url: str) -> int:
    """The pid of the server on url's port (start.sh execs it: its tree is the server)."""
    port = url.rsplit(":", 1)[1]
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                args = handle.read().split(b"\0")
        except OSError:
            continue
        if b"rl_logging_board.py" in args and f"--server.port={port}".encode() in args:
            return int(pid)
    raise SystemExit(f"no board server on port {port}")


def serve_memory(dump_dir: Path, step: int | None = None, show: bool = True) -> dict:
    """The server's resident MB after the load and after every page, each page's (first
    paint s, DOM nodes), and the step changes on Responses."""
    out: dict = {"pages": {}}
    with served(dump_dir, timeout=1800) as url:
        pid = server_pid(url)
        step = step if step is not None else last_step(url)
        out["loaded_mb"] = tree_rss(pid) / 2**20
        if show:
            print(f"loaded: server {out['loaded_mb']:,.0f} MB resident", flush=True)
        for route in ROUTES:
            heading = "Problems" if route.url_path == "problems" else route.title
            seconds, nodes = open_fresh(f"{url}/{route.url_path}?step={step}", heading, None,
                                        route.url_path)
            out["pages"][route.url_path] = (seconds, nodes)
            if show:
                print(f"/{route.url_path:10s} first paint {seconds:5.2f} s  {nodes:5d} DOM nodes"
                      f"  server {tree_rss(pid) / 2**20:,.0f} MB", flush=True)
        out["visited_mb"] = tree_rss(pid) / 2**20
        out["step_changes"] = step_changes(url, step, 3, "responses", "Responses")
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dump_dir", type=Path)
    parser.add_argument("--step", type=int, default=None)
    args = parser.parse_args()
    found = serve_memory(args.dump_dir, args.step)
    print(f"every page visited: server {found['visited_mb']:,.0f} MB resident")
    print("step change on Responses: " + " ".join(f"{s:.2f}" for s in found["step_changes"])
          + " s")


if __name__ == "__main__":
    main()
