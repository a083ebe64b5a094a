"""GRPO groups at the real shape: widget latency of the Groups and Prompts pages, and the
prompt history over a 100-step run.

    python benchmarks/bench_groups.py [--dir benchmarks/out/groups8k] [--history-steps 100]

The dump is 2 steps × 8 ranks × 1,024 samples (512 prompts × 16 answers a step), responses up
to 8,192 tokens, written by

    python samples/generate_dump.py benchmarks/out/groups8k --steps 2 --ranks 8 \\
        --samples-per-rank 1024 --max-tokens 8192 --group-size 16 --seed 11

Server time is what the board measures around its own script run (as bench_ui.py).  The
history part times Groups.history() on a summary frame of 100 steps × 8,192 samples made in
memory (the page reads nothing else: no line is parsed).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]

from apptest import board  # noqa: E402
from bench_ui import TARGET_S, open_page, timed_run  # noqa: E402

from loaders import open_run  # noqa: E402
from loaders import schema as S  # noqa: E402
from loaders.index.numbers import Numbers  # noqa: E402
from loaders.serve.groups import GroupOptions, Groups  # noqa: E402
from pages.frame.display_options import widget_key  # noqa: E402


def interactions(at, group: str, prompt: str) -> list:
    steps = at.sidebar.select_slider(key="step").options
    return [
        ("page -> groups", lambda: open_page(at, "groups")),
        ("sort by reward std", lambda: at.selectbox(key="gsort").set_value("reward std")),
        ("flag filter: zero variance", lambda: at.multiselect(key="gflags").select(
            S.ZERO_VARIANCE)),
        ("regex search", lambda: at.text_input(key="gq").input("How many|capital")),
        ("open a group", lambda: at.text_input(key="group").input(group)),
        ("diff #1 -> #2", lambda: at.selectbox(key="db").set_value(2)),
        ("full text of #3", lambda: at.selectbox(key="gfull").set_value(3)),
        ("advantage -> rloo", lambda: at.sidebar.selectbox(
            key=widget_key("adv")).set_value("rloo")),
        ("step slider -> first", lambda: at.sidebar.select_slider(key="step").set_value(
            int(steps[0]))),
        ("page -> prompts", lambda: open_page(at, "prompts")),
        ("prompt filter: never solved", lambda: at.multiselect(key="pflags").select(
            "never solved")),
        ("open a prompt", lambda: at.text_input(key="prompt").input(prompt)),
        ("page -> rewards", lambda: open_page(at, "rewards")),
        ("page -> responses", lambda: open_page(at, "responses")),
    ]


def page_latency(dump: Path) -> None:
    run = open_run(dump).trained()
    last = run.steps[-1]
    group = str(run.groups().step(last, GroupOptions()).table.index[0])
    prompt = str(run.samples[S.PROMPT_ID].iloc[0])
    start = time.perf_counter()
    at = board(dump, opts="true")  # the display options drawn: one is changed below
    print(f"{len(run.samples):,} samples, {len(run.steps)} steps; first run "
          f"{time.perf_counter() - start:.2f} s")
    results: list = []
    for label, action in interactions(at, group, prompt):
        action()
        timed_run(at, label, results)
    print(f"{'interaction':32s} {'server':>8s}  {'ratio':>10s}")
    for label, seconds, _ in results:
        print(f"{label:32s} {seconds * 1e3:5.0f} ms  {seconds / TARGET_S:.2f}x 0.3 s")
    print(f"server time: median {statistics.median(s for _, s, _ in results) * 1e3:.0f} ms, "
          f"max {max(s for _, s, _ in results) * 1e3:.0f} ms")


def synthetic_run(steps: int, prompts: int = 512, answers: int = 16) -> pd.DataFrame:
    """A summary frame of `steps` steps × prompts × answers, prompts drawn from 4× as many."""
    rng = np.random.default_rng(0)
    n = steps * prompts * answers
    prompt = np.repeat(rng.integers(0, 4 * prompts, steps * prompts), answers)
    return pd.DataFrame({
        S.STEP: np.repeat(np.arange(steps), prompts * answers), S.PROMPT_ID: prompt,
        S.GROUP_ID: prompt, S.REWARD: (rng.random(n) < 0.5).astype(np.float64),
        S.RESPONSE_LEN: rng.integers(100, 8192, n), S.ROW: np.arange(n), S.PROMPT: pd.Series(
            [f"prompt {p}" for p in prompt], dtype="string")})


def history_time(steps: int) -> None:
    frame = synthetic_run(steps)
    prompts = frame[S.PROMPT].to_numpy()

    def texts(rows: pd.DataFrame, *columns: object, **keys: object) -> pd.DataFrame:
        return rows.assign(**{S.PROMPT: prompts[rows[S.ROW].to_numpy()]})  # as read by row
    times = []
    for _ in range(3):
        groups = Groups(Numbers(held=frame), None, texts=texts)
        start = time.perf_counter()
        _, table = groups.history()
        times.append(time.perf_counter() - start)
    print(f"prompt history, {steps} steps × 8,192 samples ({len(frame):,} rows, "
          f"{len(table):,} prompts): median {statistics.median(times):.3f} s "
          f"({statistics.median(times) / 0.5:.2f}x the 0.5 s target)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=ROOT / "benchmarks" / "out" / "groups8k")
    parser.add_argument("--history-steps", type=int, default=100)
    args = parser.parse_args()
    history_time(args.history_steps)
    page_latency(args.dir.resolve())


if __name__ == "__main__":
    main()
