"""A GRPO group of 16 answers of 8,192 tokens, opened in a real browser (the real server,
headless Chromium): no exception, every answer shown, within the node budget."""

import pytest
from browser import IDLE, browser_page, served
from dump_files import make_sample, write_dump

from loaders.index.grouping import prompt_id

NODE_BUDGET = 5000
PROMPT = "Solve <b>x</b> + 1 = 2. **Show** your work."


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("groups") / "dump"
    samples = [make_sample(3, n=8192, seed=i, prompt=PROMPT, reward=float(i % 3 == 0))
               for i in range(16)]
    samples += [make_sample(3, n=64, seed=100 + i, prompt="another prompt") for i in range(16)]
    write_dump(root / "rollout_data_rank_0.jsonl", samples)
    with served(root) as url:
        yield url


def _settle(page, heading: str) -> None:
    page.get_by_role("heading", name=heading).first.wait_for(timeout=90_000)
    page.wait_for_function(IDLE, timeout=90_000)
    page.wait_for_timeout(300)
    page.wait_for_function(IDLE, timeout=90_000)


def test_a_group_of_16_long_answers_opens_within_the_node_budget(server):
    with browser_page() as page:
        page.goto(f"{server}/groups?group={prompt_id(PROMPT)}")
        _settle(page, "One group")
        page.get_by_text("Word diff #1 → #16").wait_for(timeout=60_000)
        # code blocks paint after their highlighter's script chunk loads (slow on a cold cache)
        page.get_by_text("characters hidden").nth(15).wait_for(timeout=60_000)
        assert page.locator("[data-testid='stException']").count() == 0
        cards = page.get_by_text("tokens", exact=False).filter(has_text="· reward")
        assert cards.count() == 16
        assert page.get_by_text("characters hidden").count() == 16  # head and tail only
        # the prompt's markup is literal text, never HTML
        assert page.locator("[data-testid='stMain'] b", has_text="x").count() == 0
        assert page.get_by_text("<b>x</b>", exact=False).count() >= 1
        nodes = page.evaluate("document.getElementsByTagName('*').length")
        assert nodes <= NODE_BUDGET, nodes


def test_the_full_text_of_one_long_answer_is_one_element(server):
    with browser_page() as page:
        page.goto(f"{server}/groups?group={prompt_id(PROMPT)}&gfull=2")
        _settle(page, "One group")
        # the full text of answer #2 is one element, however long
        page.get_by_text("t8191", exact=False).first.wait_for(timeout=60_000)
        assert page.locator("[data-testid='stException']").count() == 0
