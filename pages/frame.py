"""The board's frame: CLI config, sidebar, loading, and dispatch to the chosen page."""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import streamlit as st

from pages import alerts, compare, health, metrics, responses, rewards, sample, state
from pages.loading import load_run, show_summary
from pages.sidebar import (
    BoardConfig,
    choose_dir,
    choose_metrics_path,
    choose_page,
    choose_run,
    choose_split,
    choose_step,
    display_options,
)
from pages.view import View

RENDERERS = {"rewards": rewards.render, "responses": responses.render,
             "sample": sample.render, "compare": compare.render, "metrics": metrics.render,
             "health": health.render, "alerts": alerts.render}
RUN_SECONDS = "_board_run_seconds"
DEMO_DIR = Path(__file__).resolve().parents[1] / "samples" / "demo"


def parse_config(argv: list[str]) -> BoardConfig:
    """--dump-dir / $RL_BOARD_DUMP_DIR (default samples/demo), --root / $RL_BOARD_ROOT and
    --metrics / $RL_BOARD_METRICS."""
    parser = argparse.ArgumentParser(prog="rl_logging_board.py")
    parser.add_argument("--dump-dir", default=os.environ.get("RL_BOARD_DUMP_DIR", str(DEMO_DIR)))
    parser.add_argument("--root", default=os.environ.get("RL_BOARD_ROOT"))
    parser.add_argument("--metrics", default=os.environ.get("RL_BOARD_METRICS", ""))
    args, _ = parser.parse_known_args(argv)
    return BoardConfig(args.dump_dir, args.root, args.metrics)


def board(config: BoardConfig) -> None:
    """One rerun of the whole board."""
    state.apply_requests()
    st.sidebar.title("RL Logging Board")
    base = choose_dir(config)
    if base is None:
        return
    run_dir = choose_run(base)
    metrics_path = choose_metrics_path(config)
    page = choose_page()
    run = load_run(run_dir)
    if run is None:
        return
    show_summary(run)
    run = choose_split(run)
    if run.samples.empty:
        st.warning("The dump has no usable samples yet; see the problems in the sidebar.")
        return
    step = choose_step(run.steps)
    view = View(run, step, display_options(config), state.query("sample"), metrics_path)
    RENDERERS[page](view)


def _timed_board(config: BoardConfig) -> None:
    """Run the board and keep its server time, which the widget-latency benchmark reads."""
    started = time.perf_counter()
    try:
        board(config)
    finally:
        st.session_state[RUN_SECONDS] = time.perf_counter() - started


def main(argv: list[str]) -> None:
    """Entry point called by rl_logging_board.py."""
    st.set_page_config(page_title="RL Logging Board", layout="wide")
    config = parse_config(argv)
    page = st.Page(lambda: _timed_board(config), title="RL Logging Board", url_path="board",
                   default=True)
    # one hidden page: keeps Streamlit from turning the modules in pages/ into routes
    st.navigation([page], position="hidden").run()
