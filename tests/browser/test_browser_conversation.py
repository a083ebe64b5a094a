"""The conversation view in headless Chromium: hostile turns stay text, nothing is fetched.

A multi-turn sample whose messages, tool names, tool-call arguments, tool outputs, reasoning
and roles carry <script>, raw <img>/<iframe> tags, Markdown images and links and
`javascript:` URLs pointing at 198.51.100.7 (TEST-NET-2) is opened on the Sample page with
every expander opened; then the Responses page with the multi-turn filters.  Every request
is recorded (foreign ones aborted); the page must hold no element the payloads would make.
"""
from urllib.parse import urlsplit

import pytest
from browser import IDLE, browser_page, served
from dump_files import write_dump

HOST = "198.51.100.7"
HOSTILE = (f"<script>window.__pwned=1;document.title='pwned'</script>"
           f"<img src=http://{HOST}/tag.png onerror=\"window.__pwned=2\">"
           f"<iframe src=http://{HOST}/frame></iframe> ![img](http://{HOST}/md.png) "
           f"[click](javascript:window.__pwned=3) <a href=\"javascript:alert(1)\">a</a>")
INJECTED = """() => [...document.querySelectorAll(
    '[data-testid=stMain] script, [data-testid=stMain] iframe, [data-testid=stMain] img,'
    + ' [data-testid=stMain] a[href^="javascript"], [data-testid=stMain] a[href*="198.51"]')]
    .map(e => (e.closest('[data-testid^=st]') || {dataset: {}}).dataset.testid + ': '
              + e.outerHTML.slice(0, 100))"""


def _conversation(step: int, i: int) -> dict:
    call = {"id": "c1", "type": "function",
            "function": {"name": f"search{HOSTILE}", "arguments": f'{{"q": "{HOST}"}}'}}
    messages = [{"role": "system", "content": HOSTILE},
                {"role": "user", "content": f"question {i} {HOSTILE}"},
                {"role": "assistant", "content": f"<think>{HOSTILE}</think>{HOSTILE}",
                 "reasoning_content": HOSTILE, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": HOSTILE, "name": HOSTILE, "content": HOSTILE},
                {"role": f"<b>{HOSTILE}</b>", "content": HOSTILE},
                {"role": "assistant", "content": f"done {HOSTILE}", "finish_reason": HOSTILE}]
    n = 8
    return {"step": step, "messages": messages, "reward": float(i % 2),
            "response_tokens": [HOSTILE[:20]] * n, "logprobs": [-0.5] * n,
            "ref_logprobs": [-0.6] * n, "loss_mask": [1, 1, 0, 0, 0, 1, 1, 1],
            "token_turns": [2, 2, 3, 3, 4, 5, 5, 5]}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("conversation")
    write_dump(root / "rollout_data_rank0.jsonl", [_conversation(s, i) for s in range(2)
                                                   for i in range(3)])
    with served(root) as url:
        yield url


def _foreign(url: str, origin: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme not in ("data", "blob", "about") and parts.netloc != origin


def _visit(server: str, path: str, heading: str, open_all: bool) -> tuple[list, list, dict]:
    origin = urlsplit(server).netloc
    seen: list[str] = []
    with browser_page() as page:
        page.on("request", lambda request: seen.append(request.url))
        page.route("**/*", lambda route, request: route.abort() if _foreign(request.url, origin)
                   else route.continue_())
        page.goto(f"{server}/{path}")
        page.get_by_text(heading, exact=False).first.wait_for(timeout=60_000)
        page.wait_for_function(IDLE, timeout=60_000)
        if open_all:
            summaries = page.locator("[data-testid=stMain] details summary")
            for i in range(summaries.count()):
                summaries.nth(i).click()
            page.wait_for_timeout(800)
        page.wait_for_load_state("networkidle", timeout=30_000)
        state = page.evaluate("() => ({title: document.title, pwned: window.__pwned ?? null,"
                              " text: document.querySelector('[data-testid=stMain]').innerText,"
                              " nodes: document.querySelectorAll('*').length})")
        injected = page.evaluate(INJECTED)
    return [u for u in seen if _foreign(u, origin)], injected, state


def test_the_conversation_view_injects_nothing_and_fetches_nothing(server):
    leaks, injected, state = _visit(server, "sample?step=1&sample=rollout_data_rank0.jsonl:5",
                                    "Conversation", open_all=True)
    assert not leaks, leaks
    assert not injected, injected
    assert state["pwned"] is None and state["title"] != "pwned"
    assert "<script>window.__pwned=1" in state["text"]  # shown, as text
    assert "[click](javascript:window.__pwned=3)" in state["text"]
    assert state["nodes"] < 5_000


def test_the_multi_turn_filters_inject_nothing(server):
    leaks, injected, state = _visit(server, "responses?step=1", "Responses", open_all=True)
    assert not leaks and not injected, (leaks, injected)
    assert state["pwned"] is None
