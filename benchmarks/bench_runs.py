"""Comparing four big runs: opening them from their indexes, and the server time of each
widget change on the Compare runs page, driven by AppTest.

    python benchmarks/bench_runs.py [--dir benchmarks/out/runs] [--runs 4 --steps 100]
    RL_BOARD_CHROMIUM=/usr/bin/chromium python benchmarks/bench_runs.py --browser

Writes (once) `--runs` runs of the benchmark dump's shape (8 ranks x 32 samples x up to 1024
tokens a step, GRPO groups of 8) under --dir, one seed each over the same prompts (an
ablation), with training metrics, and indexes them.  Then it opens the Compare runs page on
all of them in a fresh board (every run read from its index) and changes one widget at a time.
With --browser it then serves the dir and times each view in headless Chromium, from the
click until the page is idle, with the page's DOM node count.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "samples")]

import generate_dump  # noqa: E402
from apptest import board  # noqa: E402
from bench_ui import print_server_times, timed_run  # noqa: E402
from generate_metrics import write_metrics  # noqa: E402

from loaders.find.walk import discover  # noqa: E402
from loaders.serve.catalog import Catalog  # noqa: E402
from pages.frame.keys import RUN_SECONDS  # noqa: E402

TARGET_OPEN_S, TARGET_S = 2.0, 0.3
POOL_SEED = 0  # every run draws its prompts from the same pool: runs of one ablation
SHAPE = {"ranks": 8, "samples_per_rank": 32, "max_tokens": 1024, "group_size": 8}


def write_runs(root: Path, runs: int, steps: int) -> list[str]:
    """run_0.. under root (skipped when present), each indexed once; their names."""
    real = generate_dump.make_world
    generate_dump.make_world = lambda seed, *args, **kw: real(POOL_SEED, *args, **kw)
    names = [f"run_{k}" for k in range(runs)]
    try:
        for k, name in enumerate(names):
            out = root / name
            if not any(out.glob("rollout_data_rank_*.jsonl")):
                generate_dump.write_dump(out, steps, seed=100 + k, **SHAPE)
                write_metrics(out / "logs" / "metrics.jsonl", steps=steps, seed=k, spike=60)
            subprocess.run([sys.executable, "-m", "loaders", str(out), "--json"], cwd=ROOT,
                           check=True, stdout=subprocess.DEVNULL)
    finally:
        generate_dump.make_world = real
    return names


def open_from_indexes(root: Path, names: list[str]) -> float:
    """Seconds for a fresh catalog to hold every run (each read from its index)."""
    catalog = Catalog(root)
    start = time.perf_counter()
    for name in names:
        assert catalog.run(root / name).cache == "hit"
    return time.perf_counter() - start


def interactions(at) -> list:
    def section(name: str):
        return lambda: at.segmented_control(key="runs_view").set_value(name)

    return [
        ("EMA smoothing", lambda: at.slider(key="runs_ema").set_value(0.6)),
        ("band k", lambda: at.slider(key="runs_band").set_value(2.0)),
        ("x axis -> time", lambda: at.radio(key="runs_x").set_value("time")),
        ("labels", lambda: at.text_input(key="labels").input("base, lr2, kl0, big")),
        ("B -> third run", lambda: at.selectbox(key="run_b").set_value(2)),
        ("view -> difference", section("Difference B − A")),
        ("difference of KL", lambda: at.selectbox(key="runs_diff").set_value("KL")),
        ("view -> same prompt", section("Same prompt")),
        ("step -> middle", lambda: at.select_slider(key="runs_step").set_value(
            at.select_slider(key="runs_step").options[50])),
        ("match by text", lambda: at.radio(key="match").set_value("text")),
        ("filter B better", lambda: at.radio(key="pfilter").set_value("B better")),
        ("open a prompt", lambda: at.text_input(key="rprompt").input(
            str(at.dataframe(key="t_runs_prompts").value["match_key"].iloc[0]))),
        ("view -> metrics & alerts", section("Metrics & alerts")),
        ("another metric", lambda: at.selectbox(key="runs_metric").set_value(
            at.selectbox(key="runs_metric").options[3])),
        ("view -> curves", section("Curves")),
    ]


def _idle(page) -> None:
    from browser import IDLE

    page.wait_for_function(IDLE, timeout=300_000)
    time.sleep(0.3)  # a rerun right after the last one shows the widget again
    page.wait_for_function(IDLE, timeout=300_000)


def in_browser(root: Path, names: list[str], pause: float) -> list[tuple[str, float, int]]:
    """(view, seconds until idle, DOM nodes) in headless Chromium on the real server."""
    from browser import browser_page, served

    query = "&".join([f"run={names[0]}", "follow=false"] + [f"runs={n}" for n in names])
    rows = []
    with served(root, timeout=600) as url, browser_page(1400, 1000) as page:
        start = time.perf_counter()
        page.goto(f"{url}/runs?{query}", timeout=300_000)
        page.get_by_role("heading", name="Compare runs").first.wait_for(timeout=300_000)
        _idle(page)
        rows.append((f"open /runs ({len(names)} runs)", time.perf_counter() - start - 0.3,
                     _nodes(page)))
        time.sleep(pause)
        main = page.locator("[data-testid='stMain']")
        for view in ("Difference B − A", "Same prompt", "Metrics & alerts", "Curves"):
            start = time.perf_counter()
            main.get_by_text(view, exact=True).first.click()
            _idle(page)
            rows.append((f"view -> {view}", time.perf_counter() - start - 0.3, _nodes(page)))
    return rows


def _nodes(page) -> int:
    return page.evaluate("document.getElementsByTagName('*').length")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=ROOT / "benchmarks" / "out" / "runs")
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--browser", action="store_true", help="also time the views in Chromium")
    parser.add_argument("--pause", type=float, default=5.0,
                        help="seconds on the page before the first widget change")
    args = parser.parse_args()
    names = write_runs(args.dir, args.runs, args.steps)
    sizes = [sum(f.path.stat().st_size for f in discover(args.dir / n)) for n in names]
    print(f"{len(names)} runs of {', '.join(f'{s / 1e9:.2f}' for s in sizes)} GB in {args.dir}")
    print(f"data layer: {len(names)} runs from their indexes in "
          f"{open_from_indexes(args.dir, names):.2f} s")
    start = time.perf_counter()
    at = board(args.dir, page="runs", run=names[0], runs=names)
    wall = time.perf_counter() - start
    print(f"Compare runs opened on {len(names)} runs (indexes read, figures built): server "
          f"{at.session_state[RUN_SECONDS]:.2f} s, AppTest wall {wall:.2f} s "
          f"(target <= {TARGET_OPEN_S:g} s)")
    # a user reads the page before the next click; by then the background warm-up of every
    # run's health and sample offsets (loaders.serve.runset.warm_health) is done
    time.sleep(args.pause)
    results: list = []
    for label, action in interactions(at):
        action()
        timed_run(at, label, results)
    print_server_times(results, 28)
    if args.browser:
        print(f"{'in Chromium':28s} {'until idle':>10s} {'DOM nodes':>10s}")
        for label, seconds, nodes in in_browser(args.dir.resolve(), names, args.pause):
            print(f"{label:28s} {seconds * 1e3:7.0f} ms {nodes:10,d}")


if __name__ == "__main__":
    main()
