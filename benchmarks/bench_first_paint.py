"""First paint as a user feels it: every page opened by its link in a fresh browser, then the
two clicks users make most on the Sample page, all timed in headless Chromium.

    RL_BOARD_CHROMIUM=/usr/bin/chromium python benchmarks/bench_first_paint.py \\
        [--dir DUMP_DIR] [--repeat 3] [--shots DIR]

Starts the real server (start.sh) and opens the board once, so the index is built and the
server warm, as for a user who opens a copied link to a board that is already running.  Then:

- **fresh browser**: for every route, a new browser (no cache, no session) opens
  `/ROUTE?step=S` and the time runs until the route's heading is drawn, Streamlit's status
  widget is gone and no element is still a loading skeleton; the median of `--repeat` opens;
- **warm browser**: the same link in a new tab of a browser that has opened it before (its
  scripts cached, as for a returning user);
- **step change**: on an open Sample page, the sidebar's step slider moved one step;
- **open a sample**: on the Responses page, a row of the table selected, until the Sample
  page is idle.

Goals (issue 13): ≤ 2 s for any page of the demo, ≤ 3 s on the 1.4 GB dump, ≤ 1 s for the
step change and for opening a sample.

The yardstick (`--floor`, on by default) is the same measure on pages with nothing of the
board in them (first_paint_floor.py): a bare Streamlit page, one with a small Plotly chart, one
with two and one with a table, served by the same Streamlit in a fresh browser.  It says what
part of a figure is Streamlit's and Plotly's own start-up on this machine.
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT), str(ROOT / "benchmarks")]

from bench_browser import settle  # noqa: E402
from browser import browser_page, free_port, served, wait_healthy  # noqa: E402

from pages.routes import ROUTES  # noqa: E402

SETTLE = 0.3  # what bench_browser.settle waits to catch a run that starts after another


def open_link(page: object, url: str, heading: str) -> tuple[float, int]:
    """Seconds from navigation until idle with `heading` drawn; the page's DOM nodes."""
    start = time.perf_counter()
    page.goto(url)
    settle(page, heading)
    seconds = time.perf_counter() - start - SETTLE
    return seconds, page.evaluate("document.getElementsByTagName('*').length")


def open_fresh(url: str, heading: str, shots: Path | None, name: str) -> tuple[float, int]:
    """open_link in a browser of its own: no cached script, no session."""
    with browser_page() as page:
        seconds, nodes = open_link(page, url, heading)
        if shots:
            page.screenshot(path=str(shots / f"fresh-{name}.png"))
    return seconds, nodes


def open_warm(url: str, heading: str, repeat: int) -> float:
    """open_link in new tabs of a browser that has shown the page before: its scripts come
    from the HTTP cache (Streamlit serves them as immutable), as for a returning user."""
    with browser_page() as blank:
        context = blank.context.browser.new_context(viewport={"width": 1400, "height": 1000})
        open_link(context.new_page(), url, heading)
        times = []
        for _ in range(repeat):
            tab = context.new_page()
            times.append(open_link(tab, url, heading)[0])
            tab.close()
    return statistics.median(times)


def fresh_pages(base: str, step: int, repeat: int, shots: Path | None) -> list:
    """(route, fresh-browser median seconds, warm-browser median seconds, DOM nodes)."""
    rows = []
    for route in ROUTES:
        heading = "Problems" if route.url_path == "problems" else route.title
        url = f"{base}/{route.url_path}?step={step}"
        runs = [open_fresh(url, heading, shots, route.url_path) for _ in range(repeat)]
        rows.append((f"/{route.url_path}", statistics.median(s for s, _ in runs),
                     open_warm(url, heading, repeat), max(n for _, n in runs)))
    return rows


def timed_click(page: object, action: object, heading: str) -> float:
    start = time.perf_counter()
    action()
    page.wait_for_timeout(50)  # the click's rerun shows the status widget first
    settle(page, heading)
    return time.perf_counter() - start - SETTLE


def step_changes(base: str, step: int, repeat: int, path: str = "sample",
                 heading: str = "Sample") -> list[float]:
    """A page open (Sample by default); the sidebar's step slider moved left then right by
    key, `repeat` times each, each move timed from the key press until the page is idle."""
    times = []
    with browser_page() as page:
        page.goto(f"{base}/{path}?step={step}")
        settle(page, heading)
        thumb = page.locator("[data-testid='stSidebar'] input[type='range']").first
        for i in range(2 * repeat):
            key = "ArrowLeft" if i % 2 == 0 else "ArrowRight"
            times.append(timed_click(page, lambda k=key: thumb.press(k), heading))
    return times


def open_samples(base: str, step: int, repeat: int) -> list[float]:
    """From the Responses table, select row i (its row marker), until Sample is idle; then
    the browser's Back to the table, in one session (the first open also loads the Sample
    page's chart script, as it does once in a user's session)."""
    times = []
    with browser_page() as page:
        page.goto(f"{base}/responses?step={step}")
        for i in range(repeat):
            if i:
                _back_to_table(page, f"{base}/responses?step={step}")
            settle(page, "Responses")
            grid = page.locator("[data-testid='stDataFrame']").first
            box = grid.bounding_box()
            # the row marker of row i: a header, then rows of 35 px
            x, y = box["x"] + 12, box["y"] + 35 * (i + 1) + 17
            times.append(timed_click(page, lambda x=x, y=y: page.mouse.click(x, y), "Sample"))
    return times


def _back_to_table(page: object, url: str) -> None:
    """The browser's Back to the table; its URL opened instead when Back left the page
    elsewhere (once in session 25, Responses never came back within 120 s): the next
    click is timed the same either way, and the run goes on."""
    from playwright.sync_api import TimeoutError as NotThere  # not the builtin one

    page.go_back()
    try:
        page.get_by_role("heading", name="Responses").first.wait_for(timeout=30_000)
    except NotThere:
        page.goto(url)


FLOOR_PAGES = (("bare Streamlit page", ""), ("one Plotly chart", "plot=1"),
               ("two Plotly charts", "plot=2"), ("one Vega-Lite chart", "vega=1"),
               ("one table", "table=1"))


@contextlib.contextmanager
def server_at(command: Callable[[int], list[str]], timeout: float) -> Iterator[str]:
    """`command(port)` run on a free port; yields its URL once healthy, ends it after."""
    port = free_port()
    proc = subprocess.Popen(command(port), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, timeout)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def floor_server() -> contextlib.AbstractContextManager[str]:
    return server_at(lambda port: [
        sys.executable, "-m", "streamlit", "run",
        str(ROOT / "benchmarks" / "first_paint_floor.py"), "--server.port", str(port),
        "--server.headless", "true", "--browser.gatherUsageStats", "false"], 60)


def floor(repeat: int) -> list[tuple[str, float]]:
    """Fresh-browser seconds of the yardstick pages (median of `repeat`)."""
    with floor_server() as url:
        open_fresh(url, "Floor", None, "")  # the server's first run
        return [(label, statistics.median(open_fresh(f"{url}/?{query}", "Floor", None, "")[0]
                                          for _ in range(repeat)))
                for label, query in FLOOR_PAGES]


def last_step(url: str) -> int:
    """The step the board opens at (its newest), read off the Sample page's heading."""
    with browser_page() as page:
        page.goto(f"{url}/sample")
        settle(page, "Sample")
        heading = page.get_by_role("heading", name="Sample").first.inner_text()
    return int(heading.rsplit("step", 1)[1].split()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=ROOT / "samples" / "demo")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--shots", type=Path)
    parser.add_argument("--no-floor", dest="floor", action="store_false",
                        help="skip the yardstick pages")
    args = parser.parse_args()
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
    with served(args.dir.resolve(), timeout=600) as url:
        step = last_step(url)  # also the warm-up: the index is built by now
        rows = fresh_pages(url, step, args.repeat, args.shots)
        steps, opens = step_changes(url, step, args.repeat), open_samples(url, step, args.repeat)
    print(f"{args.dir}: step {step}")
    print(f"{'page':12s} {'fresh browser':>14s} {'warm browser':>13s} {'DOM nodes':>10s}")
    for label, fresh, warm, nodes in rows:
        print(f"{label:12s} {fresh * 1e3:11.0f} ms {warm * 1e3:10.0f} ms {nodes:10,d}")
    for i, name in ((1, "fresh browser"), (2, "warm browser")):
        times = [row[i] for row in rows]
        print(f"{name}: median {statistics.median(times) * 1e3:.0f} ms, "
              f"max {max(times) * 1e3:.0f} ms")
    for label, times in (("Sample step change", steps), ("open a sample from the table", opens)):
        print(f"{label}: median {statistics.median(times) * 1e3:.0f} ms, "
              f"max {max(times) * 1e3:.0f} ms ({len(times)} times)")
    if args.floor:
        print("yardstick, fresh browser (first_paint_floor.py):")
        for label, seconds in floor(args.repeat):
            print(f"  {label:24s} {seconds * 1e3:7.0f} ms")


if __name__ == "__main__":
    main()
