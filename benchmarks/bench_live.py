"""Following a live run in Chromium: how soon a step a trainer appends is on the page.

    RL_BOARD_CHROMIUM=/usr/bin/chromium python benchmarks/bench_live.py
        [--source benchmarks/out/dump] [--steps 15] [--every 2] [--idle 40]

Copies the benchmark dump (bench_load.py makes it) to benchmarks/out/live, serves it with
start.sh and opens the board in headless Chromium (Follow is on: the files were just
written).  A writer thread then appends one step (8 ranks x 32 samples, as the dump was
made) every `--every` seconds.  For each step it prints the time from the end of its write
until the page shows all of its samples (the sidebar's sample count), with no user action.
Then, the writer stopped, it reads the server's CPU time over `--idle` seconds of idle
following, per poll.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "samples")]

from browser import IDLE, browser_page, served  # noqa: E402
from generate_dump import write_dump  # noqa: E402

from loaders.find.walk import discover  # noqa: E402
from pages.frame.live import poll_seconds  # noqa: E402

COUNT = re.compile(r"([\d,]+) samples · ([\d,]+) steps")
SHAPE = {"ranks": 8, "samples_per_rank": 32, "max_tokens": 1024, "seed": 0}


def tree_cpu(pid: int) -> float:
    """User + system CPU seconds of pid and every process below it (from /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        here = todo.pop()
        try:
            fields = Path(f"/proc/{here}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{here}/task").iterdir():
                children = task / "children"
                todo += [int(c) for c in children.read_text().split()] if children.exists() else []
        except OSError:
            continue
    return total


def server_pid(url: str) -> int:
    """The streamlit process serving url's port (start.sh execs into it)."""
    port = url.rsplit(":", 1)[1]
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if "serve.py" in cmd and f"--server.port={port}" in cmd:
                return int(proc.name)
    raise RuntimeError("server process not found")


def shown_samples(page: object) -> int:
    text = page.locator("[data-testid='stSidebar']").inner_text()
    match = COUNT.search(text)
    return int(match.group(1).replace(",", "")) if match else -1


class Writer(threading.Thread):
    """Appends steps first.. every `every` seconds; records when each write ended."""

    def __init__(self, root: Path, first: int, count: int, every: float) -> None:
        super().__init__(daemon=True)
        self.root, self.first, self.count, self.every = root, first, count, every
        self.done: dict[int, float] = {}
        self.ready = threading.Condition()

    def run(self) -> None:
        start = time.monotonic()
        for i in range(self.count):
            time.sleep(max(0.0, start + i * self.every - time.monotonic()))
            write_dump(self.root, 1, start_step=self.first + i, append=True, **SHAPE)
            with self.ready:
                self.done[self.first + i] = time.monotonic()
                self.ready.notify_all()

    def wait_written(self, step: int) -> float:
        with self.ready:
            self.ready.wait_for(lambda: step in self.done, timeout=600)
            return self.done[step]


def follow(page: object, writer: Writer, base_samples: int, per_step: int) -> list[float]:
    """Seconds from each step's write until the page shows all of its samples."""
    lags = []
    for i in range(writer.count):
        step = writer.first + i
        written = writer.wait_written(step)
        want = base_samples + (i + 1) * per_step
        page.wait_for_function(
            "want => { const m = document.querySelector('[data-testid=\"stSidebar\"]')"
            "?.innerText.match(/([\\d,]+) samples · /);"
            " return m && Number(m[1].replace(/,/g, '')) >= want; }", arg=want,
            timeout=120_000, polling=50)
        lags.append(time.monotonic() - written)
        print(f"step {step}: visible {lags[-1]:.2f} s after its write ended", flush=True)
    return lags


def idle_cpu(pid: int, seconds: float) -> float:
    before = tree_cpu(pid)
    time.sleep(seconds)
    return tree_cpu(pid) - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", type=Path, default=ROOT / "benchmarks" / "out" / "dump")
    parser.add_argument("--dir", type=Path, default=ROOT / "benchmarks" / "out" / "live")
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--every", type=float, default=2.0)
    parser.add_argument("--idle", type=float, default=40.0)
    parser.add_argument("--page", default="", help="route to follow on (default: Rewards)")
    parser.add_argument("--settle", type=float, default=5.0,
                        help="seconds between the page opening and the first appended step")
    parser.add_argument("--copy", action=argparse.BooleanOptionalAction, default=True,
                        help="start from a fresh copy of --source (else keep --dir as is)")
    args = parser.parse_args()
    if args.copy:
        shutil.rmtree(args.dir, ignore_errors=True)
        shutil.copytree(args.source, args.dir, ignore=shutil.ignore_patterns(".rl_board_cache"))
    for dump in discover(args.dir):
        os.utime(dump.path)  # written just now, as a live run's files are: Follow is on
    size = sum(f.path.stat().st_size for f in discover(args.dir))
    per_step = SHAPE["ranks"] * SHAPE["samples_per_rank"]
    with served(args.dir.resolve(), timeout=600) as url, browser_page(1400, 1000) as page:
        page.goto(f"{url}/{args.page}", timeout=600_000)
        page.get_by_text("live · last line", exact=False).first.wait_for(timeout=600_000)
        page.wait_for_function(IDLE, timeout=600_000)
        base = shown_samples(page)
        steps = base // per_step
        print(f"{size / 1e9:.2f} GB in {args.dir}, {base:,} samples shown; appending "
              f"{args.steps} steps, one every {args.every:g} s (poll every {poll_seconds():g} s)")
        time.sleep(args.settle)  # the board has been open a while when the trainer next writes
        writer = Writer(args.dir, steps, args.steps, args.every)
        writer.start()
        lags = follow(page, writer, base, per_step)
        time.sleep(5)  # the last step's racy window and page draw pass
        pid = server_pid(url)
        cpu = idle_cpu(pid, args.idle)
    polls = args.idle / poll_seconds()
    print(f"until visible: median {statistics.median(lags):.2f} s, max {max(lags):.2f} s "
          f"(target <= 5 s) over {len(lags)} steps")
    print(f"idle following: {cpu:.2f} s server CPU in {args.idle:g} s = "
          f"{cpu / polls * 1e3:.1f} ms per poll ({polls:.0f} polls, the 30 s walk included)")


if __name__ == "__main__":
    main()
