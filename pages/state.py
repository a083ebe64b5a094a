"""Session and URL state: widget values seeded from query params and written back to them."""
from __future__ import annotations

import streamlit as st

PENDING = "_pending_widget_values"


def query(name: str, default: str | None = None) -> str | None:
    """A query parameter of the current URL."""
    return st.query_params.get(name, default)


def seed(key: str, value: object) -> None:
    """Give a widget key its first value (later reruns keep what the user chose)."""
    if key not in st.session_state:
        st.session_state[key] = value


def publish(**values: object) -> None:
    """Write values to the URL so a copied link reproduces the view; None removes a key."""
    for name, value in values.items():
        if value is None:
            st.query_params.pop(name, None)
        elif st.query_params.get(name) != str(value):
            st.query_params[name] = str(value)


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


def request(**widget_values: object) -> None:
    """Set widget values on the next run (a widget's value can't change once drawn)."""
    st.session_state.setdefault(PENDING, {}).update(widget_values)
    st.rerun()


def apply_requests() -> None:
    """Apply values requested by the previous run, before any widget is drawn."""
    for key, value in st.session_state.pop(PENDING, {}).items():
        st.session_state[key] = value
