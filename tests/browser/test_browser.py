"""The real server in headless Chromium: every page renders; model text stays text."""
import pytest
from browser import browser_page, open_board, served
from dump_files import make_sample, write_dump

PAYLOAD = ('<img src=x onerror="document.body.setAttribute(\'data-pwned\',\'1\')">'
           "<script>document.body.setAttribute('data-pwned','2')</script><b>bold</b>")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser") / "dump"
    for rank in range(2):
        samples = [make_sample(step, n=8, seed=rank * 10 + i) for step in range(4)
                   for i in range(3)]
        if rank == 0:
            tokens = ["Answer: ", PAYLOAD, " done"]
            samples.append(make_sample(3, n=3, seed=99, response="".join(tokens),
                                       response_tokens=tokens, prompt="html " + PAYLOAD))
        write_dump(root / f"rollout_data_rank_{rank}.jsonl", samples)
    with served(root) as url:
        yield url


@pytest.fixture(scope="module")
def page():
    with browser_page() as page:
        yield page


@pytest.mark.parametrize("query, heading", [
    ("page=rewards", "Rewards"),
    ("page=responses&step=2", "Responses · step 2"),
    ("page=sample&step=1", "Sample · step 1"),
    ("page=compare", "RL vs reference"),
])
def test_each_page_renders(server, page, query, heading):
    open_board(page, server, query, heading)
    page.get_by_text("25 samples · 4 steps").first.wait_for(timeout=30_000)
    assert not page.locator("[data-testid='stException']").count()


def test_html_payload_is_shown_as_text_and_not_injected(server, page):
    open_board(page, server, "page=sample&step=3&sample=rollout_data_rank_0.jsonl:13",
               "Sample · step 3")
    page.get_by_text("onerror=", exact=False).first.wait_for(timeout=30_000)
    assert page.evaluate("document.body.getAttribute('data-pwned')") is None
    assert page.locator("img[src='x']").count() == 0
    assert page.locator("b:text-is('bold')").count() == 0
    assert page.get_by_text("<b>bold</b>", exact=False).count() >= 1


def test_rl_vs_reference_draws_its_panels_without_plotly(server, page):
    """Reward, length and win rate as three Vega-Lite canvases: the page loads no Plotly."""
    open_board(page, server, "page=compare", "RL vs reference")
    # the canvases besides the never-beaten prompts' bars (drawn when there are such)
    panels = ("document.querySelectorAll(\"[data-testid='stVegaLiteChart'] canvas\").length"
              " - document.querySelectorAll('.st-key-c_never canvas').length")
    page.wait_for_function(f"{panels} === 3", timeout=30_000)
    charts = page.locator("[data-testid='stVegaLiteChart'] canvas")
    assert page.locator(".js-plotly-plot").count() == 0
    box = charts.first.bounding_box()
    assert box and box["width"] > 400 and box["height"] > 150  # drawn, at the page's width

