"""Routes in a real browser: every page has its own URL, and Back, Forward and an edited
URL all land on the view they name (the real server, headless Chromium)."""

import pytest
from browser import IDLE, browser_page, served
from dump_files import make_sample, write_dump
from playwright.sync_api import expect


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("routes") / "dump"
    for rank in range(2):
        write_dump(root / f"rollout_data_rank_{rank}.jsonl",
                   [make_sample(step, n=8, seed=rank * 10 + i, prompt=f"prompt {rank} {i}")
                    for step in range(4) for i in range(3)])
    with served(root) as url:
        yield url


def _heading(page, text: str) -> None:
    # Playwright's page.url misses Streamlit's history.replaceState: read location.href
    page.get_by_role("heading", name=text).first.wait_for(timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)


def test_pages_have_urls_and_history_lands_on_the_named_view(server):
    with browser_page() as page:
        page.goto(f"{server}/responses?step=2")
        _heading(page, "Responses · step 2")
        page.locator("[data-testid='stSidebar']").get_by_role("link", name="Sample").click()
        _heading(page, "Sample · step 2")
        # the frame's bound widgets write their parameters back into the new page's URL
        page.wait_for_function("location.pathname.endsWith('/sample') && "
                               "new URLSearchParams(location.search).get('step') === '2'",
                               timeout=30_000)
        page.locator("[data-testid='stSidebar']").get_by_role("link", name="Rewards").click()
        _heading(page, "Rewards")
        page.go_back()
        _heading(page, "Sample · step 2")
        assert "/sample" in page.evaluate("location.href")
        page.go_back()
        _heading(page, "Responses · step 2")
        page.go_forward()
        _heading(page, "Sample · step 2")
        page.goto(f"{server}/responses?step=1")  # an edited URL
        _heading(page, "Responses · step 1")


def test_a_copied_link_keeps_search_and_sort(server):
    with browser_page() as page:
        page.goto(f"{server}/responses?step=3")
        _heading(page, "Responses · step 3")
        box = page.get_by_label("Regex search (prompt and response)")
        box.fill("prompt 1")
        box.press("Enter")
        page.wait_for_function("location.search.includes('q=prompt')", timeout=30_000)
        page.get_by_text("of 6 samples", exact=False).first.wait_for(timeout=30_000)
        link = page.evaluate("location.href")
    with browser_page() as fresh:
        fresh.goto(link)
        _heading(fresh, "Responses · step 3")
        fresh.get_by_text("3 of 6 samples", exact=False).first.wait_for(timeout=30_000)
        # the box may be drawn again once the first run ends: wait for its settled value
        expect(fresh.get_by_label("Regex search (prompt and response)")).to_have_value(
            "prompt 1", timeout=30_000)


def test_old_page_links_redirect_to_the_route(server):
    with browser_page() as page:
        page.goto(f"{server}/?page=alerts&step=1")
        _heading(page, "Alerts")
        href = page.evaluate("location.href")
        assert "/alerts" in href and "page=" not in href


def test_every_route_opens_by_its_path_without_a_not_found_dialog(server):
    with browser_page() as page:
        for path, heading in (("rewards", "Rewards"), ("", "Rewards"), ("alerts", "Alerts")):
            page.goto(f"{server}/{path}?step=1")
            _heading(page, heading)
            assert page.get_by_text("Page not found").count() == 0, path
            assert page.evaluate("location.pathname").rstrip("/").endswith(path)


def test_a_sample_opened_from_the_table_keeps_its_link(server):
    """A jump (state.go) puts the sample it opens into the new URL: the frame's widgets write
    their own parameters back, but a widget drawn for the first time does not."""
    with browser_page() as page:
        page.goto(f"{server}/responses?step=1")
        _heading(page, "Responses · step 1")
        grid = page.locator("[data-testid='stDataFrame']").first
        box = grid.bounding_box()
        page.mouse.click(box["x"] + 18, box["y"] + 36 * 2 + 18)  # the second row's box
        _heading(page, "Sample · step 1")
        page.wait_for_function("new URLSearchParams(location.search).get('step') === '1' && "
                               "new URLSearchParams(location.search).has('sample')",
                               timeout=30_000)
        link = page.evaluate("location.href")
        key = page.evaluate("new URLSearchParams(location.search).get('sample')")
        assert key != "rollout_data_rank_0.jsonl:1"  # not the step's first: the one picked
        expect(page.get_by_label("Sample (file:line)")).to_have_value(key)
    with browser_page() as fresh:
        fresh.goto(link)
        _heading(fresh, "Sample · step 1")
        expect(fresh.get_by_label("Sample (file:line)")).to_have_value(key, timeout=30_000)
