"""What a user feels: time from a click until the page is idle, in headless Chromium.

    RL_BOARD_CHROMIUM=/usr/bin/chromium python benchmarks/bench_browser.py [--dir DUMP_DIR]
        [--shots DIR]

Starts the real server (start.sh), opens the board, then for every route clicks its link in
the sidebar menu and waits until Streamlit's status widget is gone and the route's heading is
drawn; then Back, Forward and an edited URL.  Prints the time and the page's DOM node count
for each action, and saves a screenshot per route when --shots is given.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

from browser import IDLE, browser_page, served  # noqa: E402

ROUTES = [("Responses", "Responses"), ("Groups", "Groups"), ("Prompts", "Prompts"),
          ("Sample", "Sample"), ("RL vs reference", "RL vs reference"),
          ("Metrics", "Metrics"), ("Health", "Health"), ("Alerts", "Alerts"),
          ("Rewards", "Rewards")]


def settle(page: object, heading: str) -> None:
    page.get_by_role("heading", name=heading).first.wait_for(timeout=120_000)
    page.wait_for_function(IDLE, timeout=120_000)
    time.sleep(0.3)  # a run that starts right after the last one ends shows the widget again
    page.wait_for_function(IDLE, timeout=120_000)


def timed(page: object, label: str, action: object, heading: str, rows: list,
          ready: str | None = None) -> None:
    """Time `action` until the page is idle with `heading` (and the text `ready`) drawn."""
    start = time.perf_counter()
    action()
    if ready:
        page.get_by_text(ready).first.wait_for(timeout=120_000)
    settle(page, heading)
    seconds = time.perf_counter() - start - 0.3
    nodes = page.evaluate("document.getElementsByTagName('*').length")
    rows.append((label, seconds, nodes))


def pick(page: object, label: str, option: str) -> None:
    """Type an option into the selectbox labelled `label` and choose it."""
    page.locator("[data-testid='stSelectbox']").filter(has_text=label).first.click()
    page.keyboard.type(option)
    page.keyboard.press("Enter")


def fill(page: object, label: str, text: str) -> None:
    box = page.get_by_label(label)
    box.fill(text)
    box.press("Enter")


def first_group(dump_dir: Path) -> str:
    """The id of the first group of the last step (the Groups page's default step)."""
    from loaders import open_run
    from loaders.serve.groups import GroupOptions

    run = open_run(dump_dir).trained()
    return str(run.groups().step(run.steps[-1], GroupOptions()).table.index[0])


def group_actions(page: object, rows: list, shots: Path | None, group: str) -> None:
    """On the Groups page: open a group, then diff its best answer against the second."""
    timed(page, "open a group", lambda: fill(page, "Group id", group), "One group", rows,
          ready="Word diff")
    if shots:
        page.screenshot(path=str(shots / "group-open.png"))
    timed(page, "diff #1 -> #2", lambda: pick(page, "to answer", "2"), "One group", rows)


def run(url: str, shots: Path | None, group: str) -> list:
    rows: list = []
    with browser_page(1400, 1000) as page:
        timed(page, "open /", lambda: page.goto(url), "Rewards", rows)
        menu = page.locator("[data-testid='stSidebar']")
        for link, heading in ROUTES:
            timed(page, f"menu -> {link}", lambda n=link: menu.get_by_role("link", name=n)
                  .click(), heading, rows)
            if shots:
                page.screenshot(path=str(shots / f"route-{link.split()[0].lower()}.png"))
            if link == "Groups":
                group_actions(page, rows, shots, group)
        timed(page, "Back", page.go_back, "Alerts", rows)
        timed(page, "Forward", page.go_forward, "Rewards", rows)
        timed(page, "edited URL /responses?step=0",
              lambda: page.goto(f"{url}/responses?step=0"), "Responses · step 0", rows)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=ROOT / "samples" / "demo")
    parser.add_argument("--shots", type=Path)
    args = parser.parse_args()
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
    with served(args.dir.resolve(), timeout=300) as url:
        rows = run(url, args.shots, first_group(args.dir.resolve()))
    print(f"{'action':28s} {'until idle':>10s} {'DOM nodes':>10s}")
    for label, seconds, nodes in rows:
        print(f"{label:28s} {seconds * 1e3:7.0f} ms {nodes:10,d}")
    times = [s for _, s, _ in rows[1:]]
    print(f"clicks: median {statistics.median(times) * 1e3:.0f} ms, "
          f"max {max(times) * 1e3:.0f} ms; DOM nodes max {max(n for *_, n in rows):,}")


if __name__ == "__main__":
    main()
