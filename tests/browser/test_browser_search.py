"""A hostile regex in one session leaves the real server answering: its health check and a
second session are served while the search backtracks, and the search stops with a message."""
import time
import urllib.request
from urllib.parse import quote

from browser import browser_page, open_board, served
from dump_files import make_sample, write_dump

from loaders import limits

BACKTRACKS = r"(a|aa)+$"  # exponential on a run of a's then "!", in any backtracking engine
ISSUE_PATTERN = r"(\w+\s?)+$"


def _health_seconds(url: str) -> float:
    started = time.monotonic()
    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=30) as reply:
        assert reply.status == 200
    return time.monotonic() - started


def test_a_backtracking_search_never_holds_up_the_server(tmp_path):
    samples = [make_sample(0, seed=i) for i in range(4)]
    samples[0]["response"] = "a" * 80 + "!"
    samples[1]["response"] = "a" * 34 + "!"  # the issue's 34-character word
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", samples)
    with served(tmp_path) as url, browser_page() as page:
        page.goto(f"{url}/?page=responses&step=0&q={quote(BACKTRACKS)}")
        waits = []
        deadline = time.monotonic() + limits.SEARCH_SECONDS + 1
        while time.monotonic() < deadline:  # while the search runs in the page's session
            waits.append(_health_seconds(url))
            time.sleep(0.05)
        assert max(waits) < 0.5, waits
        page.get_by_text("search stopped after", exact=False).first.wait_for(timeout=60_000)
        started = time.monotonic()
        open_board(page, url, f"page=responses&step=0&q={quote(ISSUE_PATTERN)}",
                   "Matches in")
        assert time.monotonic() - started < 30
        assert page.get_by_text("search stopped after", exact=False).count() == 0
