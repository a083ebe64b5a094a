"""Compare runs in a real browser on three runs: the run set, labels and view go into the URL,
and that URL opened afresh shows the same comparison down to the opened prompt."""
from urllib.parse import parse_qs, quote, urlparse

from browser import browser_page, served, settle
from dump_files import write_dump
from runs_fixtures import samples, write_runs

CURVES = "[data-testid='stMain'] [data-testid='stVegaLiteChart'] canvas"


def _query(page) -> dict[str, list[str]]:
    return parse_qs(urlparse(page.evaluate("location.href")).query)


def test_three_runs_round_trip_through_the_url(tmp_path):
    root = write_runs(tmp_path / "dump", third_ids=True)  # every run logs example_id
    with served(root) as url, browser_page() as page:
        page.goto(f"{url}/runs?runs=base&runs=ablation&runs=third")
        page.get_by_role("heading", name="Compare runs").first.wait_for(timeout=60_000)
        settle(page, 400)
        main = page.locator("[data-testid='stMain']")
        for label in ("base", "ablation", "third"):
            main.get_by_text(label, exact=True).first.wait_for(timeout=30_000)
        page.wait_for_function(f"document.querySelectorAll({CURVES!r}).length === 5",
                               timeout=30_000)
        assert page.locator(".js-plotly-plot").count() == 0  # Vega-Lite: no Plotly loaded
        labels = main.get_by_label("Labels (comma-separated, in run order)", exact=True)
        labels.fill("baseline, no-KL, lr×2")
        labels.press("Enter")
        main.get_by_text("no-KL", exact=True).first.wait_for(timeout=30_000)
        main.get_by_text("Same prompt", exact=True).first.click()
        main.get_by_text("Matched by the id", exact=False).first.wait_for(timeout=30_000)
        settle(page, 400)
        main.get_by_text("B better", exact=True).first.click()
        settle(page, 400)  # the filter's name in the link, not its label with a count
        assert _query(page)["pfilter"] == ["B better"]
        main.get_by_text("all", exact=True).first.click()
        settle(page, 400)
        prompt = main.get_by_label("Prompt (match key)", exact=True)
        prompt.fill("3")
        prompt.press("Enter")
        main.get_by_text("Word diff", exact=False).first.wait_for(timeout=30_000)
        settle(page, 400)
        query = _query(page)
        assert query["runs"] == ["base", "ablation", "third"]
        assert query["labels"] == ["baseline, no-KL, lr×2"] and query["rprompt"] == ["3"]
        assert query["runs_view"] == ["Same prompt"]
        link = page.evaluate("location.href")
        assert not page.locator("[data-testid='stException']").count()
        context = page.context.browser.new_context()  # no state shared: nothing but the link
        try:
            fresh = context.new_page()
            fresh.goto(link)
            view = fresh.locator("[data-testid='stMain']")
            view.get_by_text("Word diff", exact=False).first.wait_for(timeout=60_000)
            for label in ("baseline", "no-KL", "lr×2"):
                view.get_by_text(label, exact=True).first.wait_for(timeout=30_000)
            assert view.get_by_text("Matched by the id", exact=False).count() >= 1
        finally:
            context.close()


def test_the_dump_dir_itself_is_its_folder_name_and_a_token_in_the_url(tmp_path):
    """A link made before the token (the chooser's text in `runs`) opens the dump dir
    itself, labelled by its folder, and the URL then holds the token `.`."""
    root = write_dump(tmp_path / "gen" / "rollout_data_rank_0.jsonl", samples("base")).parent
    extra = write_runs(tmp_path / "other") / "ablation"
    with served(root) as url, browser_page() as page:
        page.goto(f"{url}/runs?runs=%28the+dump+dir+itself%29&extra={quote(str(extra))}")
        main = page.locator("[data-testid='stMain']")
        main.get_by_text("ablation", exact=True).first.wait_for(timeout=60_000)
        settle(page, 400)
        main.get_by_text("gen", exact=True).first.wait_for(timeout=30_000)
        assert main.get_by_text(".", exact=True).count() == 0  # no run labelled "."
        page.wait_for_function("new URLSearchParams(location.search).get('runs') === '.'",
                               timeout=30_000)
        assert _query(page)["runs"] == ["."]
