"""The board's routes: one st.Page per page, each with its own URL path; one module (or one
small package, with its helpers) each; and main(), one rerun of the board: the frame
(pages.frame), then the chosen route.

The page modules live in this sub-package, not directly in pages/, because Streamlit treats
every pages/*.py as a page of its own (with the file name as URL path) before st.navigation
runs, and those paths would shadow the routes here.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.errors import StreamlitAPIException

from loaders.heap import give_back
from loaders.serve.run import IndexWrittenOver
from pages.figures.text import literal
from pages.frame import keys, state
from pages.frame.board import frame, parse_config
from pages.frame.view import View
from pages.routes import (
    alerts,
    compare,
    groups,
    health,
    metrics,
    problems,
    prompts,
    responses,
    rewards,
    runs,
    sample,
    tokens,
)


@dataclass(frozen=True)
class Route:
    url_path: str
    title: str
    render: Callable[[View], None]
    icon: str
    in_menu: bool = True  # False: reached from a link elsewhere (the sidebar's problem count)


ROUTES = (
    Route("rewards", "Rewards", rewards.render, ":material/trending_up:"),
    Route("responses", "Responses", responses.render, ":material/table_rows:"),
    Route("groups", "Groups", groups.render, ":material/workspaces:"),
    Route("prompts", "Prompts", prompts.render, ":material/quiz:"),
    Route("sample", "Sample", sample.render, ":material/article:"),
    Route("tokens", "Tokens", tokens.render, ":material/data_array:"),
    Route("compare", "RL vs reference", compare.render, ":material/compare_arrows:"),
    Route("runs", "Compare runs", runs.render, ":material/stacked_line_chart:"),
    Route("metrics", "Metrics", metrics.render, ":material/monitoring:"),
    Route("health", "Health", health.render, ":material/health_and_safety:"),
    Route("alerts", "Alerts", alerts.render, ":material/notifications:"),
    Route("problems", "Problems", problems.render, ":material/error:", in_menu=False),
)
BY_PATH = {route.url_path: route for route in ROUTES}
DEFAULT = "rewards"
ROOT = ""  # st_pages' key of the landing page, "/"


def st_pages(show: Callable[[Route], None]) -> dict[str, st.Page]:
    """st.Page objects by url path; `show(route)` draws the frame and then the route.

    The landing URL "/" (key ROOT) is a page of its own drawing the DEFAULT route: Streamlit
    gives its default page no path, so were Rewards the default, a link to /rewards would
    open a "Page not found" dialog over it.
    """
    pages = {route.url_path: st.Page(lambda r=route: show(r), title=route.title,
                                     url_path=route.url_path, icon=route.icon)
             for route in ROUTES}
    landing = BY_PATH[DEFAULT]
    pages[ROOT] = st.Page(lambda: show(landing), title=landing.title, icon=landing.icon,
                          url_path="home", default=True)  # its path is "/", whatever this says
    return pages


def _show(route: Route) -> None:
    view = st.session_state.get(keys.VIEW)
    if view is not None:
        route.render(view)


def _menu(box: DeltaGenerator, pages: dict[str, st.Page], current: st.Page) -> None:
    """The sidebar menu: one st.page_link per route.

    A page link keeps the frame's URL parameters (dir, step, ...) on every click, where
    Streamlit's built-in menu drops them now and then (about one click in three here), which
    would make the copied link of the new page lose the step.  Streamlit carries the bound
    parameters over only when the page changes: a link to the page on screen opens its bare
    path, the widgets keep their values and never write them back, so that link names the
    current URL's parameters itself (else the URL, and every later link, lost the dump dir).
    """
    here = state.params()
    for path, page in pages.items():
        if path != ROOT and BY_PATH[path].in_menu:
            box.page_link(page, query_params=here if page is current else None)
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
    params = {k: v for k, v in state.params().items() if k != "page"}
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
    pages = st_pages(_show)
    st.session_state[keys.PAGES] = pages
    state.apply_pending()
    navigation = _redirect_old_links(pages)
    menu = st.sidebar.container()
    try:
        # the frame is drawn before st.navigation runs: its URL-bound widgets then belong to
        # the app, not to one page, and page links keep their parameters on every click
        st.session_state[keys.VIEW] = frame(config)
        navigation = navigation or st.navigation(list(pages.values()), position="hidden")
        _menu(menu, pages, navigation)
        navigation.run()
    except IndexWrittenOver as err:
        st.error(literal(str(err)))
    finally:
        # what the page computed and dropped (a groupby over the run, a step's previews) is
        # freed into glibc's arenas, which keep it resident: hand it back (a few ms)
        give_back()
        # the widget-latency benchmark reads the server time of the last run
        st.session_state[keys.RUN_SECONDS] = time.perf_counter() - started
