"""What `python -m loaders watch` costs: its CPU while a big run is idle, and the time from
the end of a step's write to the message.

    python benchmarks/bench_watch.py [--big /tmp/rl-board-bench/large] [--idle 60]
        [--interval 5]

1. Idle: the watch follows --big (opened from its index, which this makes first), then
   nothing is written for --idle seconds; its process's CPU time over them (/proc) is the
   cost of the stat-only polls.
2. Latency: a KL-drift run (samples/generate_alert_runs.py, 32 samples a step) is written a
   step at a time over every rank, as a synchronous trainer writes it, into a watched dir;
   the fault starts at step 50, which is complete once step 51 is written. From the end of
   that write until a real webhook on 127.0.0.1 has the message, at each --interval.
"""
from __future__ import annotations

import argparse
import http.server
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from samples.generate_alert_runs import make_run  # noqa: E402
from samples.write_alert_run import write_run  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def webhook() -> tuple[http.server.ThreadingHTTPServer, list[float]]:
    arrivals: list[float] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("content-length", 0)))
            arrivals.append(time.monotonic())
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, arrivals


def watch(root: Path, url: str, interval: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "loaders", "watch", str(root), "--notify",
                             url, "--interval", str(interval), "--settle", "3600"],
                            cwd=ROOT, stderr=subprocess.DEVNULL)


def idle_cpu(big: Path, seconds: float, interval: float, url: str) -> None:
    subprocess.run([sys.executable, "-m", "loaders", str(big), "--json"], cwd=ROOT,
                   capture_output=True, check=True)  # the index, as a watched run has one
    size = sum(p.stat().st_size for p in big.iterdir() if p.is_file()) / 1e9
    proc = watch(big, url, interval)
    time.sleep(15)  # opened and settled
    start = cpu_seconds(proc.pid)
    time.sleep(seconds)
    used = cpu_seconds(proc.pid) - start
    proc.terminate()
    proc.wait(30)
    print(f"idle: {big} ({size:.2f} GB), polls every {interval:g} s: {used:.2f} s of CPU in "
          f"{seconds:g} s = {100 * used / seconds:.2f} % of a core")


def write_steps(src: Path, dst: Path, first: int, last: int) -> None:
    lines = {p.name: p.read_bytes().splitlines(keepends=True) for p in src.iterdir()
             if p.suffix == ".jsonl"}
    for step in range(first, last + 1):
        for name, found in lines.items():
            with open(dst / name, "ab") as handle:
                handle.write(b"".join(x for x in found if b'"step":%d,' % step in x[:24]))


def latency(interval: float, url: str, arrivals: list[float]) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        whole = write_run(make_run(seed=3, n=32, steps=80, fault="kl_drift", onset=50),
                          Path(tmp) / "whole")
        live = Path(tmp) / "live"
        live.mkdir()
        write_steps(whole, live, 0, 50)
        proc = watch(live, url, interval)
        time.sleep(max(8.0, 3 * interval))  # loaded, steps 0-49 checked
        before = len(arrivals)
        write_steps(whole, live, 51, 51)  # step 50 is complete now
        done = time.monotonic()
        while len(arrivals) == before and time.monotonic() - done < 120:
            time.sleep(0.01)
        proc.terminate()
        proc.wait(30)
        return arrivals[before] - done if len(arrivals) > before else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--big", type=Path, default=Path("/tmp/rl-board-bench/large"))
    parser.add_argument("--idle", type=float, default=60.0)
    parser.add_argument("--interval", type=float, default=5.0)
    args = parser.parse_args()
    server, arrivals = webhook()
    url = f"json://127.0.0.1:{server.server_address[1]}/hook"
    if args.big.is_dir():
        idle_cpu(args.big, args.idle, args.interval, url)
    for interval in sorted({1.0, args.interval}):
        got = [latency(interval, url, arrivals) for _ in range(3)]
        print(f"latency at --interval {interval:g}: from the end of the write that completes "
              f"the step to the message: " + ", ".join(f"{g:.2f} s" for g in got))
    server.shutdown()


if __name__ == "__main__":
    main()
