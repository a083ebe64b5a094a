"""RL vs reference in a real browser: the prompts RL never beat as bars a click lists the
samples of (the real server, headless Chromium)."""
from browser import browser_page, open_board, served
from playwright.sync_api import expect


def test_a_bar_of_the_never_beaten_prompts_lists_its_samples(board_dump):
    """The prompts RL never beat are bars (no data grid, so no grid script, on a fresh
    page); a click on one lists its samples in a table."""
    with served(board_dump) as url, browser_page() as page:
        open_board(page, url, "page=compare", "RL vs reference")
        bars = page.locator(".st-key-c_never canvas")
        bars.wait_for(timeout=30_000)
        assert page.locator("[data-testid='stDataFrame']").count() == 0
        bars.scroll_into_view_if_needed()
        box = bars.bounding_box()
        page.mouse.click(box["x"] + box["width"] * 0.4, box["y"] + 12)  # the only bar
        page.locator("[data-testid='stDataFrame']").first.wait_for(timeout=30_000)
        expect(page.get_by_label("Open sample")).to_have_count(1, timeout=30_000)
