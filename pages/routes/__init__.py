"""The board's routes: one st.Page per page, each with its own URL path; one module each.

The page modules live in this sub-package, not directly in pages/, because Streamlit treats
every pages/*.py as a page of its own (with the file name as URL path) before st.navigation
runs, and those paths would shadow the routes here.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

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
from pages.view import View


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
