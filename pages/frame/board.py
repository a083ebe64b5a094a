"""The board's frame: its CLI config, and the sidebar every page shares, up to the View a
page draws (pages.routes runs the frame, then the chosen route)."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

import streamlit as st

from pages.frame import exposure, live
from pages.frame.display_options import display_options
from pages.frame.loading import load_run, show_summary
from pages.frame.sidebar import (
    BoardConfig,
    choose_dir,
    choose_left_out,
    choose_metrics_path,
    choose_run,
    choose_split,
    choose_step,
    named_dir,
    step_of_linked_sample,
)
from pages.frame.view import View

DEMO_DIR = Path(__file__).resolve().parents[1] / "samples" / "demo"


def parse_config(argv: list[str]) -> BoardConfig:
    """--dump-dir / $RL_BOARD_DUMP_DIR (default samples/demo), --root / $RL_BOARD_ROOT,
    --metrics / $RL_BOARD_METRICS, --group-key / $RL_BOARD_GROUP_KEY and --allow-remote
    PREFIX (repeatable) / $RL_BOARD_ALLOW_REMOTE (prefixes separated by spaces)."""
    parser = argparse.ArgumentParser(prog="rl_logging_board.py")
    parser.add_argument("--dump-dir", default=os.environ.get("RL_BOARD_DUMP_DIR", str(DEMO_DIR)))
    parser.add_argument("--root", default=os.environ.get("RL_BOARD_ROOT"))
    parser.add_argument("--metrics", default=os.environ.get("RL_BOARD_METRICS", ""))
    parser.add_argument("--group-key", default=os.environ.get("RL_BOARD_GROUP_KEY", ""))
    parser.add_argument("--allow-remote", action="append",
                        default=os.environ.get("RL_BOARD_ALLOW_REMOTE", "").split())
    args, _ = parser.parse_known_args(argv)
    return BoardConfig(args.dump_dir, args.root, args.metrics, args.group_key,
                       tuple(args.allow_remote))


def frame(config: BoardConfig) -> View | None:
    """The sidebar every page shares; the View of this run, or None (with a message)."""
    st.sidebar.title("RL Logging Board")
    exposure.banner(config.root)
    base = choose_dir(config)
    if base is None:
        return None
    run_dir = choose_run(base)
    if run_dir is None:
        return None
    metrics_path = choose_metrics_path(config)
    run = load_run(run_dir, base)
    if run is None:
        return None
    following = live.follow(base, run_dir, run, named_dir(config))
    show_summary(run)
    run = choose_split(run).trained()
    if not run.size:
        st.warning("The dump has no usable samples yet; see the problems in the sidebar.")
        return None
    live.keep_newest(run.steps, following)
    step_of_linked_sample(run)
    step = choose_step(run.steps)
    options = display_options(config.root, config.group_key, choose_left_out(run))
    return View(run, step, options, metrics_path)
