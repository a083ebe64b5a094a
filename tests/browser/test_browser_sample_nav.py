"""The Sample page's keyboard shortcuts in a real browser: J opens the next sample of the
Responses table's order, K the previous one (the real server, headless Chromium)."""
import time

import pytest
from browser import IDLE, browser_page, served
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S

SAMPLE = "new URLSearchParams(location.search).get('sample')"


@pytest.fixture(scope="module")
def dump(tmp_path_factory):
    root = tmp_path_factory.mktemp("nav") / "dump"
    for rank in range(2):
        write_dump(root / f"rollout_data_rank_{rank}.jsonl",
                   [make_sample(step, n=4 + 3 * i + rank, seed=rank * 10 + i,
                                prompt=f"prompt {rank} {i}") for step in range(3)
                    for i in range(4)])
    return root


def _settled(page) -> None:
    page.wait_for_function(IDLE, timeout=60_000)


def _press_and_time(page, key: str, caption: str) -> float:
    """Seconds from the key press until the page shows `caption` and is idle."""
    start = time.monotonic()
    page.keyboard.press(key)
    page.get_by_text(caption, exact=False).first.wait_for(timeout=30_000)
    _settled(page)
    return time.monotonic() - start


def test_j_and_k_step_through_the_responses_order(dump, record_property):
    rows = open_run(dump, use_cache=False).step_rows(2)
    first = rows[S.KEY].iloc[0]  # the page opens the step's first sample in file order
    order = rows.sort_values(S.RESPONSE_LEN, kind="stable")[S.KEY].tolist()
    with served(dump) as url, browser_page() as page:
        page.goto(f"{url}/responses?step=2&sort=length+%28tokens%29&desc=false")
        page.get_by_role("heading", name="Responses · step 2").wait_for(timeout=60_000)
        _settled(page)
        page.locator("[data-testid='stSidebar']").get_by_role("link", name="Sample").click()
        page.get_by_text("in the Responses order: sort by length (tokens), ascending",
                         exact=False).first.wait_for(timeout=60_000)
        _settled(page)
        at = order.index(first)
        page.get_by_text(f"sample {at + 1} of {len(order)}", exact=False).first.wait_for()
        page.locator("h2").first.click()  # the focus on the page, not in a text box
        seconds = [_press_and_time(page, "j", f"sample {at + 2} of {len(order)}")]
        page.wait_for_function(f"{SAMPLE} === {order[at + 1]!r}", timeout=10_000)
        seconds.append(_press_and_time(page, "k", f"sample {at + 1} of {len(order)}"))
        # the first option is the selectbox's default: its bound parameter leaves the URL
        page.wait_for_function(f"({SAMPLE} ?? {first!r}) === {first!r}", timeout=10_000)
        record_property("keypress_to_idle_seconds", seconds)
        print(f"keypress to idle: {', '.join(f'{s:.2f} s' for s in seconds)}")
        assert max(seconds) < 10


def test_a_sample_link_without_its_step_opens_it_and_the_url_names_the_step(dump):
    """The review's D2: a link made at the newest step leaves the step out; once the run has
    moved on it opened another sample.  It opens the sample at its own step, and the URL
    then names that step, so the next page's link keeps it."""
    key = open_run(dump, use_cache=False).step_rows(0)[S.KEY].iloc[1]
    with served(dump) as url, browser_page() as page:
        page.goto(f"{url}/sample?sample={key}")
        page.get_by_role("heading", name="Sample · step 0").wait_for(timeout=60_000)
        _settled(page)
        assert page.evaluate(SAMPLE) == key
        assert page.evaluate("new URLSearchParams(location.search).get('step')") == "0"
