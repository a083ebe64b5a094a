"""A 32,768-token response in a real browser: the Sample page stays within 5,000 DOM nodes,
its window moves by the pager and by a brush on the strips, and the Tokens page draws."""
import re
import time

import pytest
from browser import browser_page, chromium_path, served
from token_dumps import write_long_dump

pytestmark = pytest.mark.skipif(not chromium_path(), reason="no Chromium (RL_BOARD_CHROMIUM)")
IDLE = "!document.querySelector('[data-testid=\"stStatusWidget\"]')"
N, SPIKE = 32_768, 20_000
MAX_NODES = 5_000


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = write_long_dump(tmp_path_factory.mktemp("long") / "dump", n=N, spike=SPIKE)
    with served(root) as url:
        yield url


def _settle(page) -> None:
    page.wait_for_function(IDLE, timeout=60_000)
    time.sleep(0.3)  # a rerun that starts right after the last one shows the widget again
    page.wait_for_function(IDLE, timeout=60_000)


def _nodes(page) -> int:
    return page.evaluate("document.getElementsByTagName('*').length")


def _first_token(page) -> int:
    title = page.locator("span.tok").first.get_attribute("title")
    return int(re.match(r"#(\d+) ", title).group(1))


def test_long_sample_page_is_bounded_and_its_window_moves(server):
    with browser_page() as page:
        page.goto(f"{server}/sample?step=0&sample=rollout_data_rank_0.jsonl:1")
        page.get_by_role("heading", name="Sample · step 0").first.wait_for(timeout=60_000)
        page.locator("span.tok").first.wait_for(timeout=60_000)
        _settle(page)
        assert _nodes(page) <= MAX_NODES
        assert page.locator("span.tok").count() == 256
        assert page.get_by_text(f"{N} tokens (pad tokens dropped)").count() == 1
        page.get_by_role("button", name="next ▶").click()
        page.wait_for_function("new URLSearchParams(location.search).get('window') === '256'",
                               timeout=60_000)
        _settle(page)
        assert _first_token(page) == 256
        box = page.get_by_label("Window start (token)")
        box.fill("30000")
        box.press("Enter")
        page.wait_for_function("document.querySelector('span.tok').title.startsWith('#30000 ')",
                               timeout=60_000)
        _settle(page)
        assert _nodes(page) <= MAX_NODES


def test_brushing_the_strips_moves_the_window(server):
    with browser_page() as page:
        page.goto(f"{server}/sample?step=0&sample=rollout_data_rank_0.jsonl:1")
        page.locator("span.tok").first.wait_for(timeout=60_000)
        _settle(page)
        plot = page.locator(".js-plotly-plot .nsewdrag").first
        plot.scroll_into_view_if_needed()
        box = plot.bounding_box()
        y = box["y"] + box["height"] / 2
        page.mouse.move(box["x"] + box["width"] * 0.5, y)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] * 0.55, y, steps=5)
        page.mouse.up()
        page.wait_for_function("new URLSearchParams(location.search).get('window') > 14000",
                               timeout=60_000)
        _settle(page)
        assert 14_000 < _first_token(page) < 19_000


def test_tokens_page_draws_within_bounds(server):
    with browser_page() as page:
        page.goto(f"{server}/tokens?step=0")
        page.get_by_role("heading", name="Tokens · step 0").first.wait_for(timeout=60_000)
        page.get_by_text("The step's hottest tokens").first.wait_for(timeout=60_000)
        _settle(page)
        assert _nodes(page) <= MAX_NODES
