"""Widget latency: server time of each rerun of the real board, driven by AppTest.

    python benchmarks/bench_ui.py [--dir benchmarks/out/dump]

Run bench_load.py first (it generates the dump and its index).  Every interaction is timed
as the wall time of AppTest.run(), i.e. one full script run on the server.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "samples")]

from apptest import board  # noqa: E402
from generate_metrics import write_metrics  # noqa: E402

from pages.frame.display_options import widget_key  # noqa: E402
from pages.frame.keys import RUN_SECONDS  # noqa: E402

TARGET_S = 0.3


def timed_run(at, label: str, results: list) -> None:
    """Server time is what the board measures around its own script run; the AppTest wall
    time adds AppTest's own processing of the page and is printed beside it."""
    start = time.perf_counter()
    at.run()
    wall = time.perf_counter() - start
    assert not at.exception, (label, at.exception)
    results.append((label, at.session_state[RUN_SECONDS], wall))


def print_server_times(results: list, width: int) -> None:
    """The table of timed_run's results, and their median and worst against TARGET_S."""
    print(f"{'interaction':{width}s} {'server':>8s}  {'ratio':>10s}  {'AppTest wall':>12s}")
    for label, seconds, wall in results:
        print(f"{label:{width}s} {seconds * 1e3:5.0f} ms  {seconds / TARGET_S:.2f}x 0.3 s"
              f"  {wall * 1e3:9.0f} ms")
    worst = max(s for _, s, _ in results)
    print(f"server time: median {statistics.median(s for _, s, _ in results) * 1e3:.0f} ms, "
          f"max {worst * 1e3:.0f} ms ({worst / TARGET_S:.2f}x the 0.3 s target)")


def open_page(at, url_path: str) -> None:
    """The next run opens another route (through the `?page=` redirect, as a link would)."""
    at.query_params["page"] = url_path


def interactions(at) -> list:
    """(label, action) pairs; each action changes one widget."""
    steps = at.sidebar.select_slider(key="step").options
    return [
        ("step slider -> middle", lambda: at.sidebar.select_slider(key="step").set_value(
            int(steps[len(steps) // 2]))),
        ("band k", lambda: at.slider(key="band").set_value(2.0)),
        ("EMA smoothing", lambda: at.slider(key="ema").set_value(0.6)),
        ("zero shift", lambda: at.toggle(key="zero").set_value(True)),
        ("page -> responses", lambda: open_page(at, "responses")),
        ("sort by KL mean", lambda: at.selectbox(key="sort").set_value("KL k3 mean")),
        ("descending off", lambda: at.toggle(key="desc").set_value(False)),
        ("regex search", lambda: at.text_input(key="q").input("answer|boxed")),
        ("flag filter", lambda: at.multiselect(key="flags").select("truncated")),
        ("page -> sample", lambda: open_page(at, "sample")),
        ("next sample", lambda: at.selectbox(key="sample").set_value(
            at.selectbox(key="sample").options[0].split(" · ")[0])),
        ("colour by k3", lambda: at.selectbox(key="colour").set_value("k3")),
        ("step slider -> last", lambda: at.sidebar.select_slider(key="step").set_value(
            int(steps[-1]))),
        ("page -> compare", lambda: open_page(at, "compare")),
        ("compare EMA", lambda: at.slider(key="cmp_ema").set_value(0.5)),
        ("KL estimator -> k2", lambda: at.sidebar.selectbox(key=widget_key("kl")).set_value("k2")),
        ("page -> metrics", lambda: open_page(at, "metrics")),
        ("metric filter", lambda: at.text_input(key="filter").input("actor")),
        ("page -> health", lambda: open_page(at, "health")),
        # only the open tab is drawn: the per-rank tab first, then its value
        ("tab -> per rank", lambda: at.session_state.__setitem__("panel", "Per rank")),
        ("per-rank value", lambda: at.radio(key="rank_value").set_value("tokens")),
        ("page -> alerts", lambda: open_page(at, "alerts")),
        ("page -> rewards", lambda: open_page(at, "rewards")),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=ROOT / "benchmarks" / "out" / "dump")
    args = parser.parse_args()
    metrics = args.dir / "logs" / "metrics.jsonl"
    if not metrics.exists():  # training metrics for the Metrics/Health/Alerts pages
        write_metrics(metrics, steps=101, seed=0, spike=60)
    start = time.perf_counter()
    at = board(args.dir, opts="true")  # the display options drawn: one is changed below
    print(f"first run (index read, cache filled): {time.perf_counter() - start:.2f} s")
    results = []
    timed_run(at, "rerun, nothing changed", results)
    for label, action in interactions(at):
        action()
        timed_run(at, label, results)
    print_server_times(results, 32)


if __name__ == "__main__":
    main()
