"""A user's regex never freezes the server: the issue's pattern runs in linear time in the
`regex` engine, a pattern that does backtrack stops at limits.SEARCH_SECONDS with a message,
and while it runs the GIL is free for the server's other threads."""
import threading
import time

import pytest
from apptest import board
from dump_files import make_sample, write_dump

from loaders import limits
from pages.figures import metrics as M
from pages.figures.search import SearchTooSlow, compile_search, highlight, matching

ISSUE_PATTERN = r"(\w+\s?)+$"  # froze Python's re for minutes on a 34-character word
WORD = "a" * 34 + "!"
BACKTRACKS = r"(a|aa)+$"  # exponential in the regex engine too, on a run of a's then "!"
RUN_OF_AS = "a" * 60 + "!"


def _compiled(pattern: str):
    found, error = compile_search(pattern)
    assert error is None
    return found


def test_the_issues_pattern_answers_at_once():
    started = time.monotonic()
    assert matching(_compiled(ISSUE_PATTERN), [WORD, "two words"]).tolist() == [False, True]
    assert time.monotonic() - started < 0.5


def test_a_backtracking_pattern_stops_at_its_time_with_a_message():
    started = time.monotonic()
    with pytest.raises(SearchTooSlow, match="search stopped after 0.5 s"):
        matching(_compiled(BACKTRACKS), ["fine", RUN_OF_AS, "never reached"], seconds=0.5)
    assert 0.4 < time.monotonic() - started < 2


def test_the_time_is_one_budget_over_every_text():
    """Many texts each just under the bound cannot add up to more than the bound."""
    texts = ["a" * 24 + "!"] * 400  # each a few ms of backtracking
    started = time.monotonic()
    with pytest.raises(SearchTooSlow):
        matching(_compiled(BACKTRACKS), texts, seconds=0.3)
    assert time.monotonic() - started < 1.5


def test_other_threads_run_while_a_search_backtracks():
    """The match releases the GIL: a thread counting meanwhile is not held up."""
    ticks, done = [], threading.Event()

    def count() -> None:
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    counter = threading.Thread(target=count)
    counter.start()
    try:
        with pytest.raises(SearchTooSlow):
            matching(_compiled(BACKTRACKS), [RUN_OF_AS], seconds=1.0)
    finally:
        done.set()
        counter.join()
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert len(ticks) > 50 and max(gaps) < 0.2, max(gaps)


def test_highlight_of_a_slow_pattern_shows_the_text_unmarked():
    assert highlight(RUN_OF_AS, _compiled(BACKTRACKS), context=5, seconds=0.2) == "a" * 10


def test_a_slow_metric_filter_is_an_error_not_a_hang():
    with pytest.raises(ValueError, match="search stopped"):
        M.group_metrics(["a" * 40 + "!", "actor/loss"], r"(a|aa)+$")


def test_the_responses_page_reports_a_slow_search_and_shows_the_step(tmp_path):
    samples = [make_sample(0, seed=i) for i in range(3)]
    samples[1]["response"] = RUN_OF_AS
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", samples)
    started = time.monotonic()
    at = board(tmp_path, page="responses", step="0", q=BACKTRACKS)
    assert not at.exception, at.exception
    assert any("search stopped after" in e.value for e in at.error)
    assert len(at.dataframe[0].value) == 3  # the other filters still apply
    assert time.monotonic() - started < limits.SEARCH_SECONDS + 20
