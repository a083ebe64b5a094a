"""The display options in a real browser: drawn only once their expander opens, yet a link
always carries them, across the page links and into a copied link (the real server,
headless Chromium)."""

import pytest
from browser import IDLE, browser_page, served
from dump_files import make_sample, write_dump

PARAM = "new URLSearchParams(location.search).get('{}')"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("options") / "dump"
    write_dump(root / "rollout_data_rank_0.jsonl",
               [make_sample(step, n=8, seed=i) for step in range(3) for i in range(3)])
    with served(root) as url:
        yield url


def _idle(page, heading: str) -> None:
    page.get_by_role("heading", name=heading).first.wait_for(timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)


def _param_is(page, name: str, value: str) -> None:
    page.wait_for_function(f"{PARAM.format(name)} === {value!r}", timeout=30_000)


def test_options_follow_the_link_while_their_widgets_are_not_drawn(server):
    with browser_page() as page:
        page.goto(f"{server}/sample?step=2&kl=k1")
        _idle(page, "Sample · step 2")
        page.get_by_text("KL k1 (token mean)").first.wait_for(timeout=30_000)
        side = page.locator("[data-testid='stSidebar']")
        assert side.get_by_text("Pad token to strip").count() == 0  # not drawn while closed
        side.locator("summary", has_text="Display options").click()
        side.get_by_text("Pad token to strip").first.wait_for(timeout=30_000)
        side.locator("[data-testid='stSelectbox']").filter(has_text="KL estimator").click()
        page.keyboard.type("k2")
        page.keyboard.press("Enter")
        _param_is(page, "kl", "k2")
        page.get_by_text("KL k2 (token mean)").first.wait_for(timeout=30_000)
        side.locator("summary", has_text="Display options").click()  # closed again
        page.wait_for_function(IDLE, timeout=60_000)
        side.get_by_role("link", name="Responses").click()
        _idle(page, "Responses · step 2")
        _param_is(page, "kl", "k2")
        side.get_by_role("link", name="Sample").click()
        _idle(page, "Sample · step 2")
        page.get_by_text("KL k2 (token mean)").first.wait_for(timeout=30_000)
        link = page.evaluate("location.href")
    with browser_page() as copied:  # a new browser: no session, only the link
        copied.goto(link)
        _idle(copied, "Sample · step 2")
        copied.get_by_text("KL k2 (token mean)").first.wait_for(timeout=30_000)
