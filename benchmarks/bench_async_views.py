"""The views of async, agentic and vision-language runs at 8,192 samples a step, as a user
opens them: the Health page's policy lag and latency panels, the Rewards page's reward
components, a Sample page with an image, Responses with a thumbnail a row, and Responses
with its response clusters opened (and the diversity over the run drawn).

    RL_BOARD_CHROMIUM=/usr/bin/chromium python benchmarks/bench_async_views.py \\
        [--dir benchmarks/out/async_views] [--repeat 3] [--only PATH_PART]

Two dumps, written once into DIR: `lag` (3 steps x 2 ranks x 4,096 samples, policy versions
up to 3 updates old: samples/generate_dump.py --max-lag 3) and `mixed` (2 steps x 8,192
samples, each with two reward components, request timing with one 30-s straggler, and a
320 x 240 PNG in its prompt).  The real server is started on each and opened once (its
index built), then every view is opened by its link in a fresh browser, `--repeat` times:
the time runs until its heading is drawn and the page is idle (tests/browser.py settle), less
the settle pause; the DOM node count is taken then.
"""
from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

from browser import browser_page, served, settle  # noqa: E402
from dump_files import make_sample  # noqa: E402
from dump_files import write_dump as write_lines  # noqa: E402
from PIL import Image  # noqa: E402

from samples.generate_dump import write_dump  # noqa: E402

PAUSE_MS = 300
VIEWS = (("lag", "health?step=2&panel=Policy+lag", "Health"),
         ("mixed", "health?step=2&panel=Latency", "Health"),
         ("mixed", "rewards?step=2&chart=Components&dist=Components", "Rewards"),
         ("mixed", "sample?step=2&sample=rollout_data_rank_0.jsonl:8193", "Sample"),
         ("mixed", "responses?step=2", "Responses"),
         ("lag", "responses?step=2&cluster_open=true", "Responses"),
         ("lag", "responses?step=2&cluster_open=true&diversity=true", "Responses"))


def _mixed(root: Path) -> None:
    (root / "img").mkdir(parents=True, exist_ok=True)
    out = io.BytesIO()
    Image.new("RGB", (320, 240), (30, 120, 200)).save(out, format="PNG")
    (root / "img" / "a.png").write_bytes(out.getvalue())
    rows = []
    for step in (1, 2):
        for i in range(8192):
            accuracy, fmt = float(i % 2), (1.0 if i % 3 == 0 else 0.5)
            took = 1.0 + (i % 97) / 10 + (30 if i == 7 else 0)
            rows.append(make_sample(step, n=8, seed=i, accuracy_reward=accuracy,
                                    format_reward=fmt, reward=accuracy + fmt,
                                    images=["img/a.png"], start_ts=1000.0 + i / 100,
                                    finish_ts=1000.0 + i / 100 + took, request_s=took,
                                    generate_s=took * 0.7, tool_s=took * 0.3))
    write_lines(root / "rollout_data_rank_0.jsonl", rows)


def _dumps(base: Path) -> dict[str, Path]:
    made = {"lag": lambda p: write_dump(p, steps=3, ranks=2, samples_per_rank=4096,
                                        max_tokens=64, seed=1, max_lag=3), "mixed": _mixed}
    for name, write in made.items():
        if not (base / name / ".done").exists():
            write(base / name)
            (base / name / ".done").touch()
    return {name: base / name for name in made}


def _open(url: str, path: str, heading: str) -> tuple[float, int]:
    with browser_page() as page:
        start = time.monotonic()
        page.goto(f"{url}/{path}")
        page.get_by_role("heading", name=heading).first.wait_for(timeout=120_000)
        settle(page, PAUSE_MS, 120_000)
        seconds = time.monotonic() - start - PAUSE_MS / 1000
        return seconds, page.evaluate("document.getElementsByTagName('*').length")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", type=Path, default=ROOT / "benchmarks" / "out" / "async_views")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    dumps = _dumps(args.dir)
    views = [v for v in VIEWS if args.only in v[1]]
    for name in sorted({v[0] for v in views}):
        with served(dumps[name]) as url:
            _open(url, "rewards?step=1", "Rewards")  # the index built, the server warm
            for _, path, heading in (v for v in views if v[0] == name):
                runs = [_open(url, path, heading) for _ in range(args.repeat)]
                times = [t for t, _ in runs]
                print(f"{path:58s} median {statistics.median(times):.2f} s "
                      f"({', '.join(f'{t:.2f}' for t in times)}), {runs[-1][1]:,} DOM nodes",
                      flush=True)


if __name__ == "__main__":
    main()
