"""Session and URL state.

Every widget that shapes the view is bound to a query parameter of the same name
(`bind="query-params"`), so Streamlit itself keeps the URL and the widgets in step: a
copied link seeds them, and Back, Forward and an edited URL put them back.  Jumps between
pages go through `go`, which carries the frame's parameters along.
"""
from __future__ import annotations

import streamlit as st

PAGES = "_board_pages"  # session key: the st.Page objects by url path, set by the frame
# widgets of the frame (sidebar), shared by every page and carried across jumps
FRAME_PARAMS = ("dir", "run", "metrics", "split", "step", "kl", "pad", "marker", "tokenizer")


def query(name: str, default: str | None = None) -> str | None:
    """A query parameter of the current URL."""
    return st.query_params.get(name, default)


def fresh(key: str, value: object) -> bool:
    """True the first time an event widget reports this value.

    Chart and table selections stay in their widget's state across reruns; acting on them
    only when they change lets the user move on with other widgets afterwards.
    """
    handled = f"_handled_{key}"
    if st.session_state.get(handled, None) == value:
        return False
    st.session_state[handled] = value
    return True


def frame_params(**changes: str | int | None) -> dict[str, str]:
    """The frame's current URL parameters with `changes` applied (None drops one)."""
    params = {name: st.query_params[name] for name in FRAME_PARAMS if name in st.query_params}
    for name, value in changes.items():
        if value is None:
            params.pop(name, None)
        else:
            params[name] = str(value)
    return params


def go(url_path: str, **params: str | int | None) -> None:
    """Switch to another page, keeping the frame and setting the given view parameters."""
    for name, value in params.items():
        if value is not None and name in st.session_state:
            st.session_state[name] = value
    st.switch_page(st.session_state[PAGES][url_path], query_params=frame_params(**params))


def select(**values: str | int) -> None:
    """Set bound widgets on this page (a chart click choosing a step, say) and rerun."""
    for name, value in values.items():
        st.session_state[name] = value
    st.rerun()
