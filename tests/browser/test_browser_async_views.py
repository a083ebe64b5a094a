"""The views of async and multimodal RL in a real browser (the real server, headless
Chromium): the Health page's Policy lag panel draws its two charts and a step's samples by
lag, the Latency panel its histogram and stragglers (a row selected opens the straggler's
Sample page), and the Sample page shows a dump's image decoded and served by the board
itself, a decompression bomb as a warning and a remote image as text, never fetched.
Each view prints its time from navigation to idle and its DOM node count (pytest -s)."""
import re
import time
from urllib.parse import urlsplit

import pytest
from browser import IDLE, browser_page, served, settle
from dump_files import make_sample, write_dump
from image_files import bomb, png
from playwright.sync_api import expect

from loaders import schema as S
from samples import generate_dump

NODE_BUDGET = 5000
LOCAL = {"127.0.0.1", "localhost"}
EXCEPTION = "[data-testid='stException']"

LAG_STEP, LAG_SAMPLES = 2, 128  # generate_dump: 2 ranks x 64 samples a step
TIMED = 8  # requests a step; the one of index STRAGGLER took 30 s, the others 1-1.6 s
STRAGGLER = 7
CAT = (40, 30)  # the good sample's image, width x height


def _timed(step: int, i: int) -> dict:
    took = 30.0 if i == STRAGGLER else 1.0 + i / 10
    return make_sample(step, seed=i, **{S.START_TS: 1000.0 + i, S.FINISH_TS: 1000.0 + i + took,
                                        S.REQUEST_S: took, S.GENERATE_S: took * 0.75,
                                        S.TOOL_S: took * 0.25})


REMOTE = "https://example.com/x.png"
IMAGES = [["img/cat.png"], ["img/bomb.png"], [REMOTE]]  # lines 1, 2, 3 of step 1


@pytest.fixture(scope="module")
def lag_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("async_lag") / "dump"
    generate_dump.write_dump(root, steps=4, ranks=2, samples_per_rank=64, max_tokens=32,
                             seed=1, max_lag=3)
    with served(root) as url:
        yield url


@pytest.fixture(scope="module")
def timed_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("async_latency") / "dump"
    # two steps: step 1 is not the default (the last), so the URL's step is what is shown
    write_dump(root / "rollout_data_rank_0.jsonl",
                [_timed(step, i) for step in (1, 2) for i in range(TIMED)])
    with served(root) as url:
        yield url


@pytest.fixture(scope="module")
def image_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("async_images") / "dump"
    (root / "img").mkdir(parents=True)
    (root / "img" / "cat.png").write_bytes(png(CAT))
    (root / "img" / "bomb.png").write_bytes(bomb())
    write_dump(root / "rollout_data_rank_0.jsonl",
                [make_sample(1, seed=i, images=images) for i, images in enumerate(IMAGES)])
    with served(root) as url:
        yield url


def _open(page, url: str, wait_text: str) -> float:
    """Go to url; seconds until `wait_text` shows and the page is idle (then settled)."""
    start = time.monotonic()
    page.goto(url)
    page.get_by_text(wait_text, exact=False).first.wait_for(timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)
    seconds = time.monotonic() - start
    settle(page)
    return seconds


def _report(page, view: str, seconds: float, record_property) -> int:
    """Print and record the view's time to idle and DOM node count; no exception box."""
    nodes = page.evaluate("document.getElementsByTagName('*').length")
    record_property(f"{view}_seconds_to_idle", round(seconds, 2))
    record_property(f"{view}_dom_nodes", nodes)
    print(f"\n{view}: {seconds:.2f} s to idle, {nodes:,} DOM nodes")
    assert page.locator(EXCEPTION).count() == 0, page.locator(EXCEPTION).first.inner_text()
    assert nodes < NODE_BUDGET, nodes
    return nodes


def _requests(page) -> list[str]:
    """Every URL the page asks for from now on (a list filled as it goes)."""
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    return urls


def _elsewhere(urls: list[str]) -> list[str]:
    """The requests to any host but the board's own."""
    return [u for u in urls if urlsplit(u).scheme in ("http", "https", "ws", "wss")
            and urlsplit(u).hostname not in LOCAL]


def _last_bar(page) -> str:
    """The tooltip of the rightmost bar of the page's one Vega-Lite chart (a chart without
    a click carries no key class; a canvas: the mouse sweeps its right part, rows above the
    x axis and legend, right to left, until Vega shows a bar's tooltip)."""
    canvas = page.locator("[data-testid='stVegaLiteChart'] canvas")
    canvas.first.wait_for(timeout=60_000)
    assert canvas.count() == 1
    canvas.scroll_into_view_if_needed()
    settle(page)
    box = canvas.bounding_box()
    tip = page.locator("#vg-tooltip-element")
    for above in range(70, 200, 10):
        for x in range(int(box["x"] + box["width"]) - 5, int(box["x"] + box["width"] * 0.8),
                       -3):
            page.mouse.move(x, box["y"] + box["height"] - above)
            if tip.count() and tip.is_visible() and "requests" in tip.inner_text():
                return tip.inner_text()
    return ""


def _table(grid) -> list[dict]:
    """A dataframe's rows as the grid's accessible table holds them (the grid itself is a
    canvas; the table is filled in after it)."""
    table = grid.locator("table").first
    table.locator("thead th").first.wait_for(state="attached", timeout=30_000)
    names = [re.sub(r" [↓↑]$", "", t) for t in table.locator("thead th").all_text_contents()]
    return [dict(zip(names, row.locator("td").all_text_contents()))
            for row in table.locator("tbody tr").all()]


def test_the_policy_lag_panel_draws_both_charts_and_the_steps_samples_by_lag(
        lag_server, record_property):
    with browser_page() as page:
        asked = _requests(page)
        seconds = _open(page, f"{lag_server}/?page=health&panel=Policy%20lag&step={LAG_STEP}"
                              "&lag_chart=true", "Chart a metric by lag")
        # three charts over the run and the step's by lag, all Vega-Lite (their titles are
        # drawn on the canvas): the panel loads no Plotly script
        charts = page.locator("[data-testid='stVegaLiteChart'] canvas")
        charts.nth(3).wait_for(timeout=60_000)
        assert charts.count() == 4 and page.locator(".js-plotly-plot").count() == 0
        grid = page.locator("[data-testid='stDataFrame']").filter(
            has=page.locator("th", has_text="policy lag"))
        rows = _table(grid)
        # weights at most 3 updates old, and never older than step 0's
        assert {row["policy lag"] for row in rows} <= {str(lag) for lag in range(LAG_STEP + 1)}
        assert sum(int(row["samples"]) for row in rows) == LAG_SAMPLES
        _report(page, "health · Policy lag", seconds, record_property)
        assert _elsewhere(asked) == []


def test_the_latency_panel_draws_the_step_and_its_straggler_opens_its_sample(
        timed_server, record_property):
    with browser_page() as page:
        seconds = _open(page, f"{timed_server}/?page=health&panel=Latency&step=1",
                        "requests of step 1 (the tail")  # the stragglers' caption
        # a Vega-Lite canvas, no Plotly: the straggler's 30 s its request time's last bar
        bar = _last_bar(page)
        assert page.locator(".js-plotly-plot").count() == 0
        assert re.search(r"of\s+request time \(8\)", bar) and re.search(r"high\s+30\b", bar)
        assert re.search(r"requests\s+1\s*$", bar), bar
        grid = page.locator(".st-key-t_stragglers [data-testid='stDataFrame']")
        rows = _table(grid)
        assert float(rows[0]["time s"]) == 30.0  # the slowest first
        assert all(float(row["time s"]) < 2 for row in rows[1:])
        _report(page, "health · Latency", seconds, record_property)
        # select the first row by its row marker, left of its first cell (the grid is a
        # canvas: the mouse, not a locator); its header and each row are ROW_PX (36) high
        grid.scroll_into_view_if_needed()
        box = grid.bounding_box()
        start = time.monotonic()
        page.mouse.click(box["x"] + 14, box["y"] + 36 + 18)
        page.get_by_role("heading", name="Sample · step 1").wait_for(timeout=30_000)
        page.get_by_text(f"sample {STRAGGLER + 1} of {TIMED}", exact=False).first.wait_for(
            timeout=30_000)
        page.wait_for_function(IDLE, timeout=60_000)
        seconds = time.monotonic() - start
        settle(page)
        assert page.get_by_text(f"Question {STRAGGLER}: what is 1 + 6?").count() >= 1
        expect(page.get_by_label("Sample (file:line)")).to_have_value(
            f"rollout_data_rank_0.jsonl:{STRAGGLER + 1}")
        _report(page, "sample · straggler (click to idle)", seconds, record_property)


def test_a_dump_image_is_decoded_and_served_by_the_board_itself(image_server,
                                                                record_property):
    with browser_page() as page:
        asked = _requests(page)
        seconds = _open(page, f"{image_server}/sample?step=1&sample=rollout_data_rank_0.jsonl:1",
                        "Images in the prompt")
        image = page.locator("[data-testid='stImage'] img")
        assert image.count() == 1
        image.first.wait_for(timeout=30_000)
        page.wait_for_function("(e) => e.complete && e.naturalWidth > 0",
                               arg=image.first.element_handle(), timeout=30_000)
        src = image.first.get_attribute("src")
        # Streamlit's media URL on the board's own server (or the bytes themselves)
        assert src.startswith("data:image/png") or src.startswith(f"{image_server}/media/"), src
        size = image.first.evaluate("e => [e.naturalWidth, e.naturalHeight]")
        assert tuple(size) == CAT
        assert page.get_by_text(f"{CAT[0]} x {CAT[1]}").count() == 1  # its caption
        _report(page, "sample · image", seconds, record_property)
        assert _elsewhere(asked) == []


def test_a_decompression_bomb_is_a_warning_not_an_image(image_server, record_property):
    with browser_page() as page:
        asked = _requests(page)
        seconds = _open(page, f"{image_server}/sample?step=1&sample=rollout_data_rank_0.jsonl:2",
                        "Images in the prompt")
        alert = page.locator("[data-testid='stAlert']").filter(has_text="image not shown")
        assert "image not shown: a decompression bomb" in alert.first.inner_text()
        assert page.locator("[data-testid='stImage']").count() == 0
        _report(page, "sample · bomb", seconds, record_property)
        assert _elsewhere(asked) == []


def test_a_remote_image_is_its_url_as_text_and_never_fetched(image_server, record_property):
    with browser_page() as page:
        asked = _requests(page)
        seconds = _open(page, f"{image_server}/sample?step=1&sample=rollout_data_rank_0.jsonl:3",
                        "Images in the prompt")
        alert = page.locator("[data-testid='stAlert']").filter(has_text="image not shown")
        assert "a remote image is never fetched" in alert.first.inner_text()
        assert page.get_by_text(REMOTE, exact=True).count() == 1
        assert page.locator("[data-testid='stImage']").count() == 0
        assert page.locator("img[src*='example.com'], a[href*='example.com']").count() == 0
        page.wait_for_timeout(500)  # time for a late fetch to show up
        _report(page, "sample · remote URL", seconds, record_property)
        assert _elsewhere(asked) == []
        assert not [u for u in asked if "example.com" in u]
