"""Streamlit's own script bundles given again from memory, once Streamlit has served them.

A fresh browser fetches about 150 of Streamlit's hashed bundles for one page of the board
(React, protobuf, Vega, the table, ...: 5 MB).  Streamlit 1.67 serves each through
Starlette's FileResponse, which reads the file in 64 KB pieces on a worker thread: 2.6 ms of
the server's CPU a file here, 0.4 s a fresh page, taken from the two cores the browser
draws with.  Kept in memory after the first time, under 1 ms a file; the first paint of the
long run's heaviest pages came 0.1-0.4 s sooner (docs/benchmarks.md, session 22).

What is kept is Streamlit's own answer (its status, headers and body; `x-served-from: memory`
added), and only an answer that Streamlit marks `immutable`: a hashed bundle, which by HTTP's
own rule never changes under its name.  index.html (no-cache), a name Streamlit does not
hold (answered with index.html), a range, a conditional request, a query and every method
but GET go to Streamlit as before.  The memo is bounded by the bundles Streamlit ships (26 MB
at most, about 5 MB for the board's pages): a path is kept only as it is normally spelled,
and never past 64 MB.  The memo sits inside Streamlit's middleware: its path checks come
first, as for every request.
"""
from __future__ import annotations

import posixpath
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# said on an answer given from memory: what tells it from Streamlit's own (tests, operators)
FROM_MEMORY = (b"x-served-from", b"memory")
# the memo's bound: Streamlit 1.67 ships 26 MB of bundles, and a path is kept only in its
# one normal spelling (Streamlit also answers /static/./js/NAME: each would be kept anew)
LIMIT_BYTES = 64 << 20
# request headers that ask for something else than the whole file
_PARTIAL = (b"range", b"if-none-match", b"if-modified-since", b"if-range")


class ImmutableMemo:
    """An ASGI app that answers as `app` does, from memory for an answer marked immutable."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.kept: dict[str, tuple[Message, bytes]] = {}  # path: (start message, body)
        self.kept_bytes = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not _plain_get(scope):
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        kept = self.kept.get(path)
        if kept is not None:
            await send(kept[0])
            await send({"type": "http.response.body", "body": kept[1]})
            return
        if posixpath.normpath(path) != path or self.kept_bytes >= LIMIT_BYTES:
            await self.app(scope, receive, send)
            return
        await self.app(scope, receive, self._recording(path, send))

    def _recording(self, path: str, send: Send) -> Send:
        """`send`, keeping a copy of an immutable 200 answer as it goes out."""
        start: Message | None = None
        pieces: list[bytes] = []

        async def recorded(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message if _immutable(message) else None
            elif message["type"] == "http.response.body" and start is not None:
                pieces.append(bytes(message.get("body", b"")))
                if not message.get("more_body", False):
                    again = {**start, "headers": [*start.get("headers", ()), FROM_MEMORY]}
                    self._keep(path, again, b"".join(pieces))
            await send(message)
        return recorded

    def _keep(self, path: str, start: Message, body: bytes) -> None:
        """Keep the answer, unless it would take the memo past LIMIT_BYTES (a path answered
        twice at once is counted once)."""
        grown = 0 if path in self.kept else len(body)
        if self.kept_bytes + grown <= LIMIT_BYTES:
            self.kept_bytes += grown
            self.kept[path] = (start, body)


def _plain_get(scope: Scope) -> bool:
    """A GET of a whole resource, with no query (a query could mean something to a handler)."""
    if scope["type"] != "http" or scope.get("method") != "GET" or scope.get("query_string"):
        return False
    return not any(name.lower() in _PARTIAL for name, _ in scope.get("headers", ()))


def _immutable(start: Message) -> bool:
    headers = {bytes(k).lower(): bytes(v).lower() for k, v in start.get("headers", ())}
    return start.get("status") == 200 and b"immutable" in headers.get(b"cache-control", b"")


def install() -> bool:
    """Wrap Streamlit's static mount in an ImmutableMemo (before the server is made); False
    when this Streamlit has no such mount where 1.67 has it (the board then runs as is)."""
    try:
        from streamlit.web.server.starlette import starlette_app
    except ImportError:
        return False
    make_routes = getattr(starlette_app, "create_streamlit_static_assets_routes", None)
    if make_routes is None or getattr(make_routes, "memo", False):
        return make_routes is not None

    def memo_routes(base_url: str | None) -> list[Any]:
        routes = make_routes(base_url)
        for route in routes:
            route.app = ImmutableMemo(route.app)
        return routes

    memo_routes.memo = True
    starlette_app.create_streamlit_static_assets_routes = memo_routes
    return True
