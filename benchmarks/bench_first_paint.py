"""First paint as a user feels it: every page opened by its link in a fresh browser, then the
two clicks users make most on the Sample page, all timed in headless Chromium.

    RL_BOARD_CHROMIUM=/usr/bin/chromium python benchmarks/bench_first_paint.py \\
        [--dir DUMP_DIR] [--repeat 3] [--shots DIR]

Starts the real server (start.sh) and opens the board once, so the index is built and the
server warm, as for a user who opens a copied link to a board that is already running.  Then:

- **fresh browser**: for every route, a new browser (no cache, no session) opens
  `/ROUTE?step=S` and the time runs until the route's heading is drawn and Streamlit's status
  widget is gone; the median of `--repeat` opens is reported;
- **step change**: on an open Sample page, the sidebar's step slider moved one step;
- **open a sample**: on the Responses page, a row of the table selected, until the Sample
  page is idle.

Goals (issue 13): ≤ 2 s for any page of the demo, ≤ 3 s on the 1.4 GB dump, ≤ 1 s for the
step change and for opening a sample.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT), str(ROOT / "benchmarks")]

from browser import browser_page, served  # noqa: E402

from pages.routes import ROUTES  # noqa: E402

# idle: no script running and every element drawn (Streamlit shows a skeleton in place of an
# element whose script chunk is still loading, after its status widget is already gone)
IDLE = ("!document.querySelector('[data-testid=\"stStatusWidget\"]') && "
        "!document.querySelector('[data-testid=\"stSkeleton\"]')")
SETTLE = 0.3  # settle() waits this long to catch a run that starts right after another


def settle(page: object, heading: str) -> None:
    page.get_by_role("heading", name=heading).first.wait_for(timeout=120_000)
    page.wait_for_function(IDLE, timeout=120_000)
    time.sleep(SETTLE)
    page.wait_for_function(IDLE, timeout=120_000)


def open_fresh(url: str, heading: str, shots: Path | None, name: str) -> tuple[float, int]:
    """Seconds from navigation until idle with `heading` drawn, in a browser of its own."""
    with browser_page() as page:
        start = time.perf_counter()
        page.goto(url)
        settle(page, heading)
        seconds = time.perf_counter() - start - SETTLE
        nodes = page.evaluate("document.getElementsByTagName('*').length")
        if shots:
            page.screenshot(path=str(shots / f"fresh-{name}.png"))
    return seconds, nodes


def fresh_pages(base: str, step: int, repeat: int, shots: Path | None) -> list:
    rows = []
    for route in ROUTES:
        heading = "Problems" if route.url_path == "problems" else route.title
        runs = [open_fresh(f"{base}/{route.url_path}?step={step}", heading, shots,
                           route.url_path) for _ in range(repeat)]
        rows.append((f"fresh /{route.url_path}", statistics.median(s for s, _ in runs),
                     max(n for _, n in runs)))
    return rows


def timed_click(page: object, action: object, heading: str) -> float:
    start = time.perf_counter()
    action()
    page.wait_for_timeout(50)  # the click's rerun shows the status widget first
    settle(page, heading)
    return time.perf_counter() - start - SETTLE


def step_changes(base: str, step: int, repeat: int) -> list[float]:
    """The Sample page open; the step slider moved left then right, `repeat` times each."""
    times = []
    with browser_page() as page:
        page.goto(f"{base}/sample?step={step}")
        settle(page, "Sample")
        thumb = page.locator("[data-testid='stSidebar'] input[type='range']").first
        for i in range(2 * repeat):
            key = "ArrowLeft" if i % 2 == 0 else "ArrowRight"
            times.append(timed_click(page, lambda k=key: thumb.press(k), "Sample"))
    return times


def open_samples(base: str, step: int, repeat: int) -> list[float]:
    """From the Responses table, select row i (its row marker), until Sample is idle."""
    times = []
    with browser_page() as page:
        for i in range(repeat):
            page.goto(f"{base}/responses?step={step}")
            settle(page, "Responses")
            grid = page.locator("[data-testid='stDataFrame']").first
            box = grid.bounding_box()
            # the row marker of row i: a header, then rows of 35 px
            x, y = box["x"] + 12, box["y"] + 35 * (i + 1) + 17
            times.append(timed_click(page, lambda x=x, y=y: page.mouse.click(x, y), "Sample"))
            page.wait_for_function(IDLE)
    return times


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
    args = parser.parse_args()
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
    with served(args.dir.resolve(), timeout=600) as url:
        step = last_step(url)  # also the warm-up: the index is built by now
        rows = fresh_pages(url, step, args.repeat, args.shots)
        steps, opens = step_changes(url, step, args.repeat), open_samples(url, step, args.repeat)
    print(f"{args.dir}: step {step}")
    print(f"{'action':28s} {'until idle':>10s} {'DOM nodes':>10s}")
    for label, seconds, nodes in rows:
        print(f"{label:28s} {seconds * 1e3:7.0f} ms {nodes:10,d}")
    fresh = [s for _, s, _ in rows]
    print(f"fresh browser: median {statistics.median(fresh) * 1e3:.0f} ms, "
          f"max {max(fresh) * 1e3:.0f} ms")
    for label, times in (("Sample step change", steps), ("open a sample from the table", opens)):
        print(f"{label}: median {statistics.median(times) * 1e3:.0f} ms, "
              f"max {max(times) * 1e3:.0f} ms ({len(times)} times)")


if __name__ == "__main__":
    main()
