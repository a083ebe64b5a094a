"""Session and URL state.

Every widget that shapes the view is bound to a query parameter of the same name
(`bind="query-params"`), so Streamlit itself keeps the URL and the widgets in step: a
copied link seeds them, and Back, Forward and an edited URL put them back.  Jumps between
pages go through `go`, which carries the frame's parameters along and puts the target
page's own into its new URL.  The display options are
the exception: drawn only while their expander is open, they keep their own parameters
(pages.frame.display_options).
"""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from streamlit.errors import StreamlitAPIException

from pages.frame import keys


def query(name: str, default: str | None = None) -> str | None:
    """A query parameter of the current URL."""
    return st.query_params.get(name, default)


def params() -> dict[str, list[str]]:
    """Every parameter of the current URL, a repeated one (a range) with all its values."""
    return {name: st.query_params.get_all(name) for name in st.query_params}


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


def go(url_path: str, **params: str | int | tuple[float, float] | None) -> None:
    """Switch to another page, keeping the frame and setting the given view parameters."""
    given = {k: v for k, v in params.items() if v is not None}
    _pend(given)
    # The frame's widgets, bound on every page, write their own parameters back once the
    # target page has drawn them; a widget the target draws for the first time does not
    # write the value it was given (Streamlit 1.67): the link would lose the sample.  Its
    # parameters go into the new URL now, a range as its slider writes it (repeated).
    page = st.session_state[keys.PAGES][url_path]
    shown = {k: _in_url(v) for k, v in given.items() if k not in keys.FRAME_PARAMS}
    try:
        st.switch_page(page, query_params=shown)
    except StreamlitAPIException:  # a parameter a drawn widget owns: it writes its own
        st.switch_page(page, query_params={})


def _in_url(value: str | int | tuple[float, float]) -> str | list[str]:
    """A parameter as a bound widget reads it from the URL: a range slider's two ends as a
    repeated parameter (?reward=0.5&reward=1.5), a toggle's as true or false."""
    if isinstance(value, tuple):
        return [str(float(end)) for end in value]
    return str(value).lower() if isinstance(value, bool) else str(value)


def select(**values: str | int) -> None:
    """Set bound widgets (a chart click choosing a step, say) and rerun."""
    _pend(values)
    st.rerun()


def _pend(values: dict[str, str | int]) -> None:
    # a drawn widget's value can't change in the same run: the next run sets it first
    st.session_state.setdefault(keys.PENDING, {}).update(values)


def apply_pending() -> None:
    """Give widgets the values a jump asked for, before any widget is drawn."""
    for key, value in st.session_state.pop(keys.PENDING, {}).items():
        st.session_state[key] = value


# ---- a chooser whose URL parameter is a token, not its label --------------------------------
# A bound selectbox or multiselect writes its options' labels into the URL (Streamlit 1.67); a
# chooser whose labels carry counts or data (a cluster's size and skeleton, the dump dir's
# text) keeps its own parameter instead: the options themselves, written after each draw and
# read back on a link, Back or Forward.

def url_values(key: str) -> tuple[str, ...] | None:
    """The parameter's values (repeated for a multiselect); None when the URL has none."""
    return tuple(st.query_params.get_all(key)) if key in st.query_params else None


def url_changed(key: str) -> bool:
    """Whether the chooser `key` is to be set from the URL: not set yet, or the URL changed
    since write_url wrote it (a link, Back, Forward)."""
    return key not in st.session_state or url_values(key) != st.session_state.get(_written(key))


def write_url(key: str, values: list[str] | None) -> None:
    """The chooser's values into the URL (None: no parameter, its default), remembered."""
    if values is None:
        st.query_params.pop(key, None)
    else:
        st.query_params[key] = values
    st.session_state[_written(key)] = url_values(key)


def seed_token(key: str, options: list[str], default: str,
               label: Callable[[str], str] | None = None) -> None:
    """A one-option chooser set from the URL when it changed (url_changed); a value no option
    has is dropped, but one that is an option's label (a link from before) names it."""
    if not url_changed(key):
        return
    url = st.query_params.get(key)
    by_label = {label(option): option for option in options} if label else {}
    st.session_state[key] = (default if url is None else url if url in options
                             else by_label.get(url, default))


def write_token(key: str, value: str, default: str) -> None:
    """A one-option chooser's value into the URL (none at its default)."""
    write_url(key, None if value == default else [value])


def _written(key: str) -> str:
    return f"_{key}_written"
