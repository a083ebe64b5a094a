"""Follow in a real browser: a writer appends lines, and the page shows them by itself."""
import time

from browser import browser_page, open_board, served
from dump_files import line_of, make_sample, write_dump

from loaders.writer import DumpWriter

THUMB = "[data-testid='stSidebar'] [data-testid='stSliderThumbValue']"


def _slider_value(page) -> str:
    return page.locator(THUMB).first.inner_text()


def test_appended_steps_appear_without_any_user_action(tmp_path):
    root = tmp_path / "live"
    for rank in range(2):
        write_dump(root / f"rollout_data_rank_{rank}.jsonl",
                   [make_sample(step, n=8, seed=rank * 10 + i) for step in range(3)
                    for i in range(3)])
    with served(root) as url, browser_page() as page:
        open_board(page, url, "", "18 samples · 3 steps")
        page.get_by_text("live · last line", exact=False).first.wait_for(timeout=30_000)
        assert _slider_value(page) == "2"
        writers = [DumpWriter(root, rank=rank) for rank in range(2)]
        for step in (3, 4):
            written = time.monotonic()
            for rank, writer in enumerate(writers):
                for i in range(3):
                    writer.write(make_sample(step, n=8, seed=rank * 10 + i))
            page.get_by_text(f"{18 + 6 * (step - 2)} samples · {step + 1} steps",
                             exact=False).first.wait_for(timeout=20_000)
            assert time.monotonic() - written < 20
            page.wait_for_function(
                f"document.querySelector(\"{THUMB}\")?.innerText === '{step}'", timeout=20_000)
        # a half-written line stays pending; the rest of it completes the sample
        half = line_of(make_sample(5, n=8, seed=1))
        with open(root / "rollout_data_rank_0.jsonl", "ab") as handle:
            handle.write(half[:50])
        page.get_by_text("bytes of half-written lines pending", exact=False).first.wait_for(
            state="attached", timeout=20_000)
        with open(root / "rollout_data_rank_0.jsonl", "ab") as handle:
            handle.write(half[50:])
        page.get_by_text("31 samples · 6 steps", exact=False).first.wait_for(timeout=20_000)
        assert not page.locator("[data-testid='stException']").count()
