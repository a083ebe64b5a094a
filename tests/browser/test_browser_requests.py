"""No request leaves the board's origin, whatever the dump, its names and the URL hold.

Every page of the real server is opened in headless Chromium on a dump whose dir and file
names, texts, metric names and alerts.toml carry Markdown images and links, raw <img> tags
and KaTeX \\href / \\includegraphics pointing at 198.51.100.7 (TEST-NET-2: nothing answers
there).  Every request the page starts is recorded; any that is not same-origin is also
aborted, so nothing leaves the machine while the test looks for it.
"""
from urllib.parse import quote, urlsplit

import orjson
import pytest
from browser import IDLE, browser_page, served
from dump_files import make_sample, write_dump

from pages.routes import DEFAULT, ROUTES

HOST = "198.51.100.7"
PAYLOADS = (f"![img](http://{HOST}/md.png)", f"[click](http://{HOST}/link)",
            f"<img src=http://{HOST}/tag.png>", f"$\\href{{http://{HOST}/href}}{{x}}$",
            f"$\\includegraphics{{http://{HOST}/katex.png}}$",
            f"<iframe src=http://{HOST}/frame></iframe>")
HOSTILE = " ".join(PAYLOADS)
# a file or dir name cannot hold "/": https:HOST (another scheme than the page's) still
# names that host to a browser
NAME = f"![n](https:{HOST}) <img src=https:{HOST}> $\\href{{https:{HOST}}}{{n}}$"
FETCH_PROBE = f"http://{HOST}/probe.png"


def _write_board(root):
    samples = [make_sample(step, n=6, seed=i, prompt=f"Question {i}: {HOSTILE}",
                           response=HOSTILE, response_tokens=list(PAYLOADS),
                           ref_response=HOSTILE, ground_truth=HOSTILE,
                           **{HOSTILE: 1.5, "note": HOSTILE})
               for step in range(3) for i in range(4)]
    write_dump(root / "rollout_data_rank_0.jsonl", samples, extra=f'{{"bad {NAME}\n'.encode())
    write_dump(root / NAME / "rollout_data_rank_1.jsonl", samples[:4],
               extra=f"{HOSTILE}\n".encode())
    (root / f"{NAME}.jsonl").write_bytes(orjson.dumps({HOSTILE: HOSTILE}) + b"\n")
    # a literal-string table name (no escapes in TOML's '...'), so the file parses
    (root / "alerts.toml").write_text(f"['{HOSTILE}']\nk = 1.0\n")
    metrics = [{"step": step, f"actor/{HOSTILE}": 0.1 * step, HOSTILE: 1.0 + step,
                f"{NAME}/loss": 2.0 - 0.1 * step, "actor/entropy": 1.0}  # NAME: a group
               for step in range(12)]
    (root / "metrics.jsonl").write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in metrics))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("requests") / NAME
    _write_board(root)
    with served(root) as url:
        yield url


@pytest.fixture(scope="module")
def watched(server):
    """A page recording every request URL (and aborting those to other origins)."""
    origin = urlsplit(server).netloc
    seen: list[str] = []

    def route(request_route, request):
        if _foreign(request.url, origin):
            request_route.abort()
        else:
            request_route.continue_()

    with browser_page() as page:
        page.on("request", lambda request: seen.append(request.url))
        page.on("websocket", lambda socket: seen.append(socket.url))
        page.route("**/*", route)
        yield page, seen, origin


def _foreign(url: str, origin: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about"):
        return False
    return parts.netloc != origin


# what in the page asked: elements that load a URL of another host, with their Streamlit
# element (data-testid) and text, so a failure names the element to fix
CULPRITS = """() => [...document.querySelectorAll('img[src], iframe[src], link[href], source[src]')]
  .map(e => [e, e.getAttribute('src') ?? e.getAttribute('href')])
  .filter(([e, url]) => e.tagName !== 'LINK' || /icon|stylesheet|preload/.test(e.rel))
  .filter(([e, url]) => new URL(url, location.href).host !== location.host
                        && !/^(data|blob|about):/.test(url))
  .map(([e, url]) => {
    const box = e.closest('[data-testid^=st]');
    return `${e.tagName.toLowerCase()} ${url} in ${box ? box.dataset.testid : 'head'}: `
           + (box ? box.innerText.slice(0, 100) : '');
  })"""


def _idle(page, heading: str) -> None:
    page.get_by_text(heading, exact=False).first.wait_for(timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)
    page.wait_for_load_state("networkidle", timeout=30_000)
    page.wait_for_timeout(500)  # images start loading once their element is drawn


# the default route is served at "/" (its own path shows "Page not found")
def _hover_help(page, seen: list[str], origin: str) -> list[str]:
    """Tooltips (widget help, the "?" beside charts) are Markdown drawn only on hover: hover
    each; the labels of those whose tooltip asked another host."""
    icons, culprits = page.locator("[data-testid='stTooltipIcon']"), []
    for i in range(min(icons.count(), 16)):
        icon, before = icons.nth(i), sum(_foreign(url, origin) for url in seen)
        if icon.is_visible():
            icon.hover()
            page.wait_for_timeout(200)
            if sum(_foreign(url, origin) for url in seen) > before:
                label = icon.evaluate("e => e.parentElement.parentElement.innerText")
                culprits.append(f"the help tooltip of {label[:60]!r}")
    return culprits


VISITS = [pytest.param("" if route.url_path == DEFAULT else route.url_path, "", route.title,
                       id=route.url_path) for route in ROUTES] + [
    pytest.param("", f"dir={quote(f'/no/such/{NAME}/{HOSTILE}')}&run={quote(NAME)}",
                 "No such directory", id="hostile-dir"),
    pytest.param("metrics", f"metrics={quote(f'{NAME}/{HOSTILE}')}", "Metrics",
                 id="hostile-metrics-path"),
    pytest.param("metrics", f"filter={quote(HOSTILE + '(')}", "Metrics", id="hostile-filter"),
    pytest.param("responses", f"step=1&q={quote(HOSTILE)}", "Responses · step 1",
                 id="hostile-search"),
    pytest.param("sample", "step=2&sample=rollout_data_rank_0.jsonl:9", "Sample · step 2",
                 id="hostile-sample"),
]


@pytest.mark.parametrize(("path", "query", "heading"), VISITS)
def test_no_request_leaves_the_origin(server, watched, path, query, heading):
    page, seen, origin = watched
    seen.clear()
    page.goto(f"{server}/{path}" + (f"?{query}" if query else ""))
    _idle(page, heading)
    for name in ("Problems", "Display options"):  # drawn only when opened
        expander = page.locator("[data-testid='stSidebar'] summary", has_text=name)
        if expander.count():
            expander.first.click()
    culprits = page.evaluate(CULPRITS) + _hover_help(page, seen, origin)
    page.wait_for_timeout(500)
    leaks = [url for url in seen if _foreign(url, origin)]
    assert not leaks, (f"/{path} (?{query[:40]}…) asked other hosts for {leaks}; by "
                       + "; ".join(culprits))
    assert any(urlsplit(url).netloc == origin for url in seen)


def test_the_recorder_sees_and_stops_a_request_to_another_host(server, watched):
    page, seen, origin = watched
    page.goto(f"{server}/alerts")
    _idle(page, "Alerts")
    seen.clear()
    failed = page.evaluate("""url => new Promise(done => { const img = new Image();
        img.onload = () => done(false); img.onerror = () => done(true); img.src = url; })""",
                           FETCH_PROBE)
    assert failed and FETCH_PROBE in seen and _foreign(FETCH_PROBE, origin)
