"""Screenshots of every page for the README, made by driving the real server in Chromium.

    RL_BOARD_CHROMIUM=/usr/bin/chromium .venv/bin/python scripts/screenshots.py [DUMP_DIR]

Serves DUMP_DIR (default samples/demo, copied to a temp dir so its index stays out of the repo)
with start.sh and writes docs/screenshots/<page>.png.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser import browser_page, open_board, served  # noqa: E402

SHOTS = {
    "rewards": ("page=rewards&step=8", "Step 8"),
    "responses": ("page=responses&step=8", "Responses · step 8"),
    "sample": ("page=sample&step=8&sample=rollout_data_rank_0.jsonl:77", "Sample · step 8"),
    "compare": ("page=compare", "Prompts where RL never beat"),
    "metrics": ("page=metrics", "Filter metrics"),
    "health": ("page=health&step=11", "Stage times"),
    "alerts": ("page=alerts", "Thresholds"),
}


def main() -> None:
    os.environ.setdefault("RL_BOARD_CHROMIUM", "/usr/bin/chromium")
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "samples" / "demo"
    out = ROOT / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "demo"
        shutil.copytree(source, dump, ignore=shutil.ignore_patterns(".*"))
        with served(dump) as url, browser_page(1500, 1900) as page:
            for name, (query, wait_text) in SHOTS.items():
                open_board(page, url, query, wait_text)
                time.sleep(2.5)  # let plotly finish drawing
                page.screenshot(path=str(out / f"{name}.png"))
                print(f"wrote {out / f'{name}.png'}")


if __name__ == "__main__":
    main()
