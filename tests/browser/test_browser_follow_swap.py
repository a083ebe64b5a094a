"""Follow in a real browser, on a dump dir named through a link: the link swapped to another
run (as a `latest -> run_N` link is by a launcher) shows that run within a few polls, with
no click and no Refresh."""
import os
import time

from browser import browser_page, open_board, served
from dump_files import make_sample, write_dump


def _run(root, steps: int, per_step: int) -> None:
    write_dump(root / "rollout_data_rank_0.jsonl",
               [make_sample(step, n=6, seed=i) for step in range(steps) for i in range(per_step)])


def test_a_followed_dir_link_swapped_to_another_run_is_shown_by_itself(tmp_path):
    _run(tmp_path / "run_1", 3, 4)
    _run(tmp_path / "run_2", 5, 2)
    latest = tmp_path / "latest"
    os.symlink("run_1", latest)
    with served(latest) as url, browser_page() as page:
        open_board(page, url, "", "12 samples · 3 steps")
        page.get_by_text("live · last line", exact=False).first.wait_for(timeout=30_000)
        swapped = time.monotonic()
        os.symlink("run_2", tmp_path / "latest.new")
        os.replace(tmp_path / "latest.new", latest)
        page.get_by_text("10 samples · 5 steps", exact=False).first.wait_for(timeout=20_000)
        assert time.monotonic() - swapped < 20
        assert not page.locator("[data-testid='stException']").count()
