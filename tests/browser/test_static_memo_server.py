"""The real server gives Streamlit's bundles again from memory (scripts/static_memo.py) with
Streamlit's own answer, and every other request as before."""
from __future__ import annotations

import os
import re
import urllib.error
import urllib.request

import pytest
from browser import ROOT, served
from streamlit import file_util

STATIC = file_util.get_static_dir()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(base URL, the file of the server's output so far)."""
    log = tmp_path_factory.mktemp("memo") / "server.log"
    with served(ROOT / "samples" / "demo", log_path=log) as url:
        yield url, log


def get(url: str, headers: dict | None = None) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, {k.lower(): v for k, v in reply.headers.items()}, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def bundle_name() -> str:
    with open(os.path.join(STATIC, "index.html"), encoding="utf-8") as page:
        return re.search(r'src="\./static/js/([^"]+\.js)"', page.read()).group(1)


def test_a_bundle_given_again_is_streamlits_answer_byte_for_byte(server):
    url, _ = server
    name = bundle_name()
    with open(os.path.join(STATIC, "static", "js", name), "rb") as file:
        on_disk = file.read()
    first, again = get(f"{url}/static/js/{name}"), get(f"{url}/static/js/{name}")
    assert first[0] == again[0] == 200
    assert first[2] == again[2] == on_disk
    # the launcher installed the memo: the second answer came from it
    assert "x-served-from" not in first[1] and again[1]["x-served-from"] == "memory"
    assert {k: v for k, v in first[1].items() if k != "date"} == {
        k: v for k, v in again[1].items() if k not in ("date", "x-served-from")}
    assert "immutable" in again[1]["cache-control"]
    assert int(again[1]["content-length"]) == len(on_disk)


def test_everything_else_is_answered_as_streamlit_answers_it(server):
    url, _ = server
    name = bundle_name()
    get(f"{url}/static/js/{name}")  # kept
    status, headers, body = get(f"{url}/static/js/{name}", {"Range": "bytes=0-99"})
    assert status == 206 and len(body) == 100  # Streamlit's range answer, not the memo's
    assert "x-served-from" not in headers
    for path in ("/", "/rewards", "/static/js/not-a-bundle.js"):  # index.html each time
        status, headers, body = get(url + path)
        assert status == 200 and headers["cache-control"] == "no-cache"
        assert "x-served-from" not in headers
        assert b"<title>Streamlit</title>" in body
    assert get(f"{url}/static/js/..%2f..%2findex.html")[0] == 400  # path checks come first


def test_the_launcher_says_nothing_of_the_memo_on_the_pinned_streamlit(server):
    _, log = server
    said = log.read_text()  # the launcher speaks before the server answers its health check
    assert "URL: http" in said and "has no static mount" not in said
