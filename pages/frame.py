"""The board's frame: CLI config, page routes, the shared sidebar, then the chosen page."""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.errors import StreamlitAPIException

from loaders.heap import give_back
from loaders.serve.run import IndexWrittenOver
from pages import exposure, live, routes, state
from pages.figures.text import literal
from pages.loading import load_run, show_summary
from pages.sidebar import (
    BoardConfig,
    choose_dir,
    choose_left_out,
    choose_metrics_path,
    choose_run,
    choose_split,
    choose_step,
    display_options,
    named_dir,
)
from pages.view import View

RUN_SECONDS = "_board_run_seconds"
VIEW = "_board_view"  # session key: this run's View, read by the page callable
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
    step = choose_step(run.steps)
    options = display_options(config, choose_left_out(run))
    return View(run, step, options, metrics_path)


def _show(route: routes.Route) -> None:
    view = st.session_state.get(VIEW)
    if view is not None:
        route.render(view)


def _menu(box: DeltaGenerator, pages: dict[str, st.Page]) -> None:
    """The sidebar menu: one st.page_link per route.

    A page link keeps the frame's URL parameters (dir, step, ...) on every click, where
    Streamlit's built-in menu drops them now and then (about one click in three here), which
    would make the copied link of the new page lose the step.
    """
    for path, page in pages.items():
        if path != routes.ROOT and routes.BY_PATH[path].in_menu:
            box.page_link(page)
    box.divider()


def _redirect_old_links(pages: dict[str, st.Page]) -> st.Page | None:
    """`?page=NAME` (the links of earlier versions) opens that page's own route.

    Switching needs the routes registered, so this calls st.navigation itself; the page it
    returns is the one to run when NAME is not a route.
    """
    wanted = st.query_params.get("page")
    if wanted is None:
        return None
    navigation = st.navigation(list(pages.values()), position="hidden")
    params = {k: st.query_params.get_all(k) for k in st.query_params if k != "page"}
    if wanted in pages:
        try:
            st.switch_page(pages[wanted], query_params=params)
        except StreamlitAPIException:  # mid-session the frame's widgets own their params
            st.switch_page(pages[wanted], query_params={})
    st.query_params.pop("page", None)
    return navigation


def main(argv: list[str]) -> None:
    """Entry point called by rl_logging_board.py: one rerun of the whole board."""
    started = time.perf_counter()
    # a set icon keeps the routes' :material/ icons, fetched from fonts.gstatic.com, out of
    # the favicon; an emoji favicon is a data: URL, so no page load leaves the machine
    st.set_page_config(page_title="RL Logging Board", layout="wide", page_icon="📈")
    config = parse_config(argv)
    pages = routes.st_pages(_show)
    st.session_state[state.PAGES] = pages
    state.apply_pending()
    navigation = _redirect_old_links(pages)
    menu = st.sidebar.container()
    try:
        # the frame is drawn before st.navigation runs: its URL-bound widgets then belong to
        # the app, not to one page, and page links keep their parameters on every click
        st.session_state[VIEW] = frame(config)
        navigation = navigation or st.navigation(list(pages.values()), position="hidden")
        _menu(menu, pages)
        navigation.run()
    except IndexWrittenOver as err:
        st.error(literal(str(err)))
    finally:
        # what the page computed and dropped (a groupby over the run, a step's previews) is
        # freed into glibc's arenas, which keep it resident: hand it back (a few ms)
        give_back()
        # the widget-latency benchmark reads the server time of the last run
        st.session_state[RUN_SECONDS] = time.perf_counter() - started
