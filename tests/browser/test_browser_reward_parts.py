"""A histogram bar clicked on the Rewards page, in a real browser (the real server, headless
Chromium): the reward histogram's bar (a Vega-Lite canvas) opens Responses with the Reward
range set to that bar, a component histogram's bar (Vega-Lite too) opens it filtered on that
column ("Filter by any column"); the table then holds only that bar's samples.  A click on
the reward curve picks its nearest step."""
import re

import pytest
from browser import browser_page, served, settle
from dump_files import make_sample, write_dump

N = 24  # samples a step; i: accuracy i % 2, format 1.0 where i % 3 == 0 else 0.5


def _sample(step: int, i: int) -> dict:
    accuracy, fmt = float(i % 2), 1.0 if i % 3 == 0 else 0.5
    return make_sample(step, seed=i, accuracy_reward=accuracy, format_reward=fmt,
                       reward=accuracy + fmt)  # ref_reward 0.25: make_sample's own


# reward 0.5 (8 samples), 1.0 (4), 1.5 (8), 2.0 (4); format_reward 0.5 (16), 1.0 (8)
REWARD_15 = {i for i in range(N) if i % 2 == 1 and i % 3 != 0}
FORMAT_1 = {i for i in range(N) if i % 3 == 0}

class ClickIgnored(AssertionError):
    """The bar click left the page where it was."""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("reward_parts") / "dump"
    write_dump(root / "rollout_data_rank_0.jsonl",
               [_sample(step, i) for step in (1, 2) for i in range(N)])
    with served(root) as url:
        yield url



def _vega_bars(page, chart: str, series: str) -> list[tuple[float, float]]:
    """Where the bars of one series of a Vega-Lite histogram lie, left to right: the chart
    is a canvas, so the mouse sweeps it just above its x axis, and each bar is known by the
    tooltip Vega shows over it (its series and bounds)."""
    canvas = page.locator(f".st-key-{chart} canvas").first
    canvas.wait_for(timeout=60_000)
    canvas.scroll_into_view_if_needed()
    settle(page)
    box = canvas.bounding_box()
    tip = page.locator("#vg-tooltip-element")
    for above in (100, 90, 110, 80, 120):  # the axis and its labels below the plot
        found: dict[str, tuple[float, float]] = {}
        y = box["y"] + box["height"] - above
        for x in range(int(box["x"]) + 30, int(box["x"] + box["width"]) - 5, 5):
            page.mouse.move(x, y)
            if tip.count() and tip.is_visible() and re.search(
                    rf"(^|\s){re.escape(series)}\s*$", tip.inner_text(), re.M):
                found.setdefault(tip.inner_text(), (x, y))
        if found:
            return sorted(found.values())
    return []


def _opened_responses(page, step: int) -> None:
    """The click switched to the Responses page (an assertion, so a click ignored fails as
    one, not as a timeout)."""
    heading = page.get_by_role("heading", name=f"Responses · step {step}")
    try:
        heading.wait_for(timeout=20_000)
    except Exception:  # Playwright's TimeoutError
        settle(page)
        where = page.evaluate("location.pathname")
        raise ClickIgnored(f"the bar click left the page on {where}, not Responses") from None
    settle(page)
    assert page.locator("[data-testid='stException']").count() == 0, \
        page.locator("[data-testid='stException']").first.inner_text()


def _table(page) -> list[dict]:
    """The Responses table's rows as the grid's accessible table holds them."""
    grid = page.locator("[data-testid='stDataFrame'] table").first
    # not shown (the grid paints a canvas), and filled in after the caption above it
    grid.locator("thead th", has_text="prompt").wait_for(state="attached", timeout=30_000)
    names = [re.sub(r" [↓↑]$", "", t) for t in grid.locator("thead th").all_text_contents()]
    return [dict(zip(names, row.locator("td").all_text_contents()))
            for row in grid.locator("tbody tr").all()]


def _slider(page, label: str) -> tuple[float, float]:
    """A range slider's two values as its thumbs show them (rounded to its 0.01 step)."""
    low, high = (page.locator(f"input[aria-label='{label} — {end}']")
                 .get_attribute("aria-valuetext") for end in ("start", "end"))
    return float(low), float(high)


def _link(page, param: str, label: str) -> tuple[str, tuple[float, float]]:
    """The page's URL, once it carries the range (its slider's two ends, a repeated
    parameter), and the range its slider shows."""
    page.wait_for_function(f"new URLSearchParams(location.search).getAll('{param}').length "
                           "== 2", timeout=30_000)
    return page.evaluate("location.href"), _slider(page, label)


def _opens_the_same(link: str, label: str, shown: tuple[float, float], count: int) -> None:
    """The link, opened in a fresh browser, shows the same range and the same samples."""
    with browser_page() as fresh:
        fresh.goto(link)
        _opened_responses(fresh, 1)
        assert _slider(fresh, label) == shown
        fresh.get_by_text(f"{count} of {N} samples", exact=False).first.wait_for()


def _seed(prompt: str) -> int:
    return int(re.match(r"Question (\d+):", prompt).group(1))


def test_a_reward_bar_clicked_opens_its_samples_in_responses(server):
    with browser_page() as page:
        page.goto(f"{server}/rewards?step=1&dist=Histogram")
        page.get_by_role("heading", name="Step 1: 24 samples").wait_for(timeout=60_000)
        settle(page)
        assert page.locator(".js-plotly-plot").count() == 0  # the page's charts: Vega-Lite
        bars = _vega_bars(page, "c_hist", f"reward ({N})")
        assert len(bars) == 4  # rewards 0.5, 1.0, 1.5, 2.0 (ref_reward's 0.25 apart)
        page.mouse.click(*bars[2])  # the bar of reward 1.5
        _opened_responses(page, 1)
        low, high = _slider(page, "Reward range")
        assert low <= 1.5 <= high and high - low < 0.1  # one bar of 30 over [0.25, 2]
        page.get_by_text(f"{len(REWARD_15)} of {N} samples", exact=False).first.wait_for()
        rows = _table(page)
        assert len(rows) == len(REWARD_15)
        assert {float(row["reward"]) for row in rows} == {1.5}
        assert {_seed(row["prompt"]) for row in rows} == REWARD_15
        link, shown = _link(page, "reward", "Reward range")
    _opens_the_same(link, "Reward range", shown, len(REWARD_15))


def test_a_component_bar_clicked_opens_responses_filtered_on_that_column(server):
    with browser_page() as page:
        page.goto(f"{server}/rewards?step=1&dist=Components&component=format_reward")
        settle(page)
        assert page.locator(".js-plotly-plot").count() == 0  # the tab's charts: Vega-Lite
        bars = _vega_bars(page, "c_component", f"format_reward ({N})")
        assert len(bars) == 2  # format_reward 0.5 and 1.0
        page.mouse.click(*bars[1])  # the bar of format_reward 1.0
        _opened_responses(page, 1)
        expander = page.locator("[data-testid='stExpander']").filter(
            has_text="Filter by any column")
        assert expander.locator("details").get_attribute("open") is not None
        assert expander.get_by_text("format_reward range").count() == 1
        low, high = _slider(page, "format_reward range")
        assert 0.5 < low < 1.0 == high  # the last of 30 bars over [0.5, 1]
        page.get_by_text(f"{len(FORMAT_1)} of {N} samples", exact=False).first.wait_for()
        rows = _table(page)
        assert len(rows) == len(FORMAT_1)
        # the table has no format_reward column: its samples are the ones of format 1.0,
        # whose reward is their accuracy (0 or 1) plus 1
        assert {_seed(row["prompt"]) for row in rows} == FORMAT_1
        assert {float(row["reward"]) for row in rows} == {1.0, 2.0}
        link, shown = _link(page, "frange", "format_reward range")
    _opens_the_same(link, "format_reward range", shown, len(FORMAT_1))


def test_a_click_on_the_reward_curve_picks_the_nearest_step(server):
    """The reward curve is a Vega-Lite canvas: a click anywhere near a step's point (here
    step 2, at the right end) chooses that step for every page."""
    with browser_page() as page:
        page.goto(f"{server}/rewards?step=1")
        page.get_by_role("heading", name="Step 1: 24 samples").wait_for(timeout=60_000)
        canvas = page.locator(".st-key-c_reward canvas").first
        canvas.wait_for(timeout=60_000)
        settle(page)
        box = canvas.bounding_box()
        page.mouse.click(box["x"] + box["width"] * 0.78, box["y"] + box["height"] * 0.45)
        # the last step is the slider's default: the link then names no step
        page.get_by_role("heading", name="Step 2: 24 samples").wait_for(timeout=30_000)
