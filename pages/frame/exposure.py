"""Who can reach the board: the address Streamlit listens on, and a warning when that is
more than this machine while no --root confines what a link can open.

The board has no login, so anyone who reaches the port can open any dir the server can read
unless --root is set.  `.streamlit/config.toml` binds 127.0.0.1; an operator who passes
another `--server.address` shares the board on purpose, and is told once at start (by
scripts/serve.py) and on every page (the sidebar banner) when no --root goes with it.
"""
from __future__ import annotations

import ipaddress

import streamlit as st

from pages.figures.text import literal

ADDRESS_OPTION = "server.address"


def is_loopback(address: str | None) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost; an unset address (every interface), a host
    name or another address is reachable from elsewhere."""
    host = (address or "").strip().strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exposure_warning(address: str | None, root: str | None) -> str | None:
    """The one-line warning for a board others can reach with nothing confining it."""
    if is_loopback(address) or root:
        return None
    where = address.strip() if address and address.strip() else "every interface"
    return (f"The board listens on {where} without --root: anyone who can reach the port "
            "can open any dir this server can read. Pass --root DIR, or bind 127.0.0.1 and "
            "use an SSH tunnel (see docs/threat-model.md).")


def banner(root: str | None) -> None:
    """The sidebar banner of an exposed board (nothing when it listens on loopback)."""
    warning = exposure_warning(st.get_option(ADDRESS_OPTION), root)
    if warning:
        st.sidebar.warning(literal(warning), icon=":material/public:")
