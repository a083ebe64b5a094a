"""scripts/static_memo.py: an answer Streamlit marks immutable is given again from memory,
and nothing else is (the server's own answers are checked in tests/browser)."""
from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest

# scripts/ is no package: the module is loaded from its file, scripts/ left off sys.path
_SPEC = importlib.util.spec_from_file_location(
    "static_memo", Path(__file__).resolve().parents[1] / "scripts" / "static_memo.py")
static_memo = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(static_memo)

BUNDLE = b"console.log('bundle');" * 5000
IMMUTABLE = [(b"content-type", b"application/javascript"),
             (b"cache-control", b"public, immutable, max-age=31536000")]
NO_CACHE = [(b"content-type", b"text/html"), (b"cache-control", b"no-cache")]


class Origin:
    """An ASGI app that answers every request with `headers` and BUNDLE in 64 KB pieces, as
    Starlette's FileResponse does, and counts the requests it saw."""

    def __init__(self, headers: list, status: int = 200, finish: bool = True) -> None:
        self.headers, self.status, self.finish, self.calls = headers, status, finish, 0

    async def __call__(self, scope: dict, receive: object, send: object) -> None:
        self.calls += 1
        await send({"type": "http.response.start", "status": self.status,
                    "headers": self.headers})
        pieces = [BUNDLE[i:i + 65536] for i in range(0, len(BUNDLE), 65536)]
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1 and self.finish
            await send({"type": "http.response.body", "body": piece, "more_body": not last})


def request(app: static_memo.ImmutableMemo, path: str = "/static/js/index.abc.js",
            method: str = "GET", headers: list | None = None, query: bytes = b"") -> list:
    """The messages `app` sends for one request."""
    sent = []

    async def send(message: dict) -> None:
        sent.append(message)

    async def receive() -> dict:
        return {"type": "http.request", "body": b""}

    scope = {"type": "http", "method": method, "path": path, "query_string": query,
             "headers": headers or []}
    asyncio.run(app(scope, receive, send))
    return sent


def body(messages: list) -> bytes:
    return b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")


def test_an_immutable_answer_is_kept_whole_and_given_again_without_the_origin():
    origin = Origin(IMMUTABLE)
    memo = static_memo.ImmutableMemo(origin)
    first, second = request(memo), request(memo)
    assert origin.calls == 1
    assert body(first) == body(second) == BUNDLE
    assert second[0]["status"] == 200
    assert second[0]["headers"] == [*IMMUTABLE, static_memo.FROM_MEMORY]
    assert first[0]["headers"] == IMMUTABLE
    assert len(second) == 2  # one piece: the memo's body is the whole file
    assert request(memo, "/static/js/other.def.js") and origin.calls == 2  # by path


@pytest.mark.parametrize("headers, status, finish", [
    (NO_CACHE, 200, True),  # index.html, and a name Streamlit answers with it
    (IMMUTABLE, 404, True),  # only a 200 is kept
    (IMMUTABLE, 200, False),  # an answer cut short (the client went away) is never kept
])
def test_other_answers_are_never_kept(headers, status, finish):
    origin = Origin(headers, status, finish)
    memo = static_memo.ImmutableMemo(origin)
    request(memo)
    request(memo)
    assert origin.calls == 2 and memo.kept == {}


def test_only_a_normally_spelled_path_is_kept_and_never_past_the_limit(monkeypatch):
    origin = Origin(IMMUTABLE)
    memo = static_memo.ImmutableMemo(origin)
    for path in ("/static/./js/a.js", "/./static/js/a.js", "/static/js/x/../a.js"):
        assert body(request(memo, path)) == BUNDLE  # answered by Streamlit, as it answers
    assert memo.kept == {} and origin.calls == 3
    monkeypatch.setattr(static_memo, "LIMIT_BYTES", 2 * len(BUNDLE))
    for name in "abcd":
        request(memo, f"/static/js/{name}.js")
    assert sorted(memo.kept) == ["/static/js/a.js", "/static/js/b.js"]
    assert memo.kept_bytes == 2 * len(BUNDLE)
    half_full = static_memo.ImmutableMemo(origin)
    monkeypatch.setattr(static_memo, "LIMIT_BYTES", len(BUNDLE) * 3 // 2)
    for name in "ab":  # the second would take it past the limit: answered, never kept
        assert body(request(half_full, f"/static/js/{name}.js")) == BUNDLE
    assert sorted(half_full.kept) == ["/static/js/a.js"]
    assert half_full.kept_bytes == len(BUNDLE)


@pytest.mark.parametrize("kind", ["range", "if-none-match", "head", "query"])
def test_partial_conditional_and_other_requests_go_to_the_origin(kind):
    origin = Origin(IMMUTABLE)
    memo = static_memo.ImmutableMemo(origin)
    request(memo)  # kept
    asked = {"range": {"headers": [(b"Range", b"bytes=0-99")]},
             "if-none-match": {"headers": [(b"if-none-match", b'"abc"')]},
             "head": {"method": "HEAD"}, "query": {"query": b"v=2"}}[kind]
    assert body(request(memo, **asked)) == BUNDLE
    assert origin.calls == 2  # Streamlit answered it (a 206, a 304 or a HEAD are its own)


def test_websockets_pass_through():
    seen = []

    async def origin(scope: dict, receive: object, send: object) -> None:
        seen.append(scope["type"])

    async def run() -> None:
        await static_memo.ImmutableMemo(origin)({"type": "websocket", "path": "/_stcore/stream"},
                                                None, None)
    asyncio.run(run())
    assert seen == ["websocket"]


def test_install_wraps_the_pinned_streamlits_static_mount_once():
    from streamlit.web.server.starlette import starlette_app

    before = starlette_app.create_streamlit_static_assets_routes
    try:
        assert static_memo.install() and static_memo.install()
        routes = starlette_app.create_streamlit_static_assets_routes(None)
        assert routes and all(isinstance(r.app, static_memo.ImmutableMemo) for r in routes)
        assert not isinstance(routes[0].app.app, static_memo.ImmutableMemo)  # not twice
    finally:
        starlette_app.create_streamlit_static_assets_routes = before
