"""The URL names the view after every click (the real server, headless Chromium): the page
link to the page on screen keeps every parameter, the dump dir first, and Groups and
Metrics each keep their own parameter, its value as written."""
from urllib.parse import parse_qs, quote, urlsplit

import metric_fixtures as M
import pytest
from browser import browser_page, served, settle
from dump_files import make_sample, write_dump

from samples.generate_dump import write_dump as generate

HREF = "location.href"


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    """The server's own dump, and another one a link names with `dir`."""
    root = tmp_path_factory.mktemp("url_state")
    write_dump(root / "own" / "rollout_data_rank_0.jsonl",
               [make_sample(step, n=4, seed=step) for step in range(2)])
    generate(root / "other", steps=4, ranks=1, samples_per_rank=16, max_tokens=32, seed=3,
             group_size=4)
    M.write_verl_file(root / "other" / "logs" / "metrics.jsonl", M.healthy())
    with served(root / "own") as url:
        yield url, root / "other"


def _params(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.evaluate(HREF)).query)


def _menu(page, name: str) -> None:
    page.locator("[data-testid='stSidebar'] a[data-testid='stPageLink-NavLink']").filter(
        has_text=name).first.click()
    page.wait_for_timeout(300)
    settle(page, 800)


def test_the_link_to_the_page_on_screen_keeps_the_url(dumps):
    url, other = dumps
    with browser_page() as page:
        page.goto(f"{url}/responses?dir={quote(str(other))}&step=1&sort=length%20(tokens)")
        page.get_by_role("heading", name="Responses · step 1").wait_for(timeout=60_000)
        settle(page)
        _menu(page, "Responses")
        assert _params(page) == {"dir": [str(other)], "step": ["1"],
                                 "sort": ["length (tokens)"]}
        page.locator("[data-testid='stSidebar'] [data-testid='stSlider'] input").first.focus()
        page.keyboard.press("ArrowRight")
        page.get_by_role("heading", name="Responses · step 2").wait_for(timeout=60_000)
        settle(page, 800)
        assert _params(page)["dir"] == [str(other)]
        _menu(page, "Sample")
        assert _params(page)["dir"] == [str(other)] and _params(page)["step"] == ["2"]


def test_a_metric_group_stays_on_metrics(dumps):
    url, other = dumps
    with browser_page() as page:
        page.goto(f"{url}/metrics?dir={quote(str(other))}")
        settle(page)
        page.locator("[data-testid='stSelectbox']").filter(has_text="Group").click()
        page.get_by_role("option", name="actor", exact=True).click()
        settle(page, 800)
        assert _params(page)["group"] == ["actor"]  # the name as written
        _menu(page, "Groups")
        assert "group" not in _params(page) and "gid" not in _params(page)
        assert page.get_by_text("No group").count() == 0


def test_an_opened_group_stays_on_groups(dumps):
    url, other = dumps
    with browser_page() as page:
        page.goto(f"{url}/groups?dir={quote(str(other))}")
        settle(page)
        grid = page.locator("[data-testid='stDataFrame']").first
        box = grid.bounding_box()
        page.mouse.click(box["x"] + 15, box["y"] + 36 + 17)  # the first row
        page.get_by_text("Word diff", exact=False).first.wait_for(timeout=60_000)
        settle(page, 800)
        _menu(page, "Metrics")
        values = _params(page).get("group", [])
        assert all("&#" not in value and not value.lstrip("-").isdigit() for value in values)
