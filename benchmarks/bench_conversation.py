"""Agent trajectories at scale: load, Sample-page server time, Chromium idle and DOM nodes.

    RL_BOARD_CHROMIUM=/usr/bin/chromium .venv/bin/python benchmarks/bench_conversation.py \
        [--samples 256] [--turns 201] [--repeat 3] [--skip-browser]

Writes benchmarks/out/agent: one step of `--samples` conversations of `--turns` turns
(system, user, then assistant/tool pairs) over 32,768 response tokens each, a third of them
masked tool tokens, one tool output of 100,000 characters per sample; then
1. a cold load (`open_run`, no cache) and the per-sample cost over a single-turn dump of
   the same token count (the trained-token view and conversation columns);
2. the Sample page's server time (measured by the board around its script run, AppTest):
   open a sample, turn page 5, every part hidden but tool calls;
3. in headless Chromium: from the action until the page is idle, and its DOM nodes.
"""
from __future__ import annotations

import argparse
import re
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from apptest import board  # noqa: E402

from loaders import open_run  # noqa: E402
from pages.figures.conversation import TURNS_PER_PAGE, page_of  # noqa: E402
from pages.frame.keys import RUN_SECONDS  # noqa: E402

OUT = ROOT / "benchmarks" / "out"
TOKENS = 32_768
KEY = "rollout_data_rank0.jsonl:1"


def _sample(i: int, turns: int, rng: np.random.Generator, multi: bool) -> dict:
    pairs = (turns - 2) // 2
    per_turn = TOKENS // (2 * pairs)
    messages = [{"role": "system", "content": "You are an agent. " * 20},
                {"role": "user", "content": f"Task {i}: fix the failing test."}]
    mask, turn_of = [], []
    for k in range(pairs):
        call = {"id": f"c{k}", "type": "function", "function": {
            "name": ("bash", "read_file", "search")[k % 3],
            "arguments": orjson.dumps({"cmd": f"pytest -k test_{k}", "timeout": 30}).decode()}}
        messages.append({"role": "assistant", "content": f"<think>{'step ' * 60}</think>"
                         f"Running check {k}. " * 8, "tool_calls": [call]})
        output = ("x" * 100_000) if k == 0 else (f"line {k}\n" * 40 + (
            "Traceback (most recent call last): boom" if k % 17 == 0 else "ok"))
        messages.append({"role": "tool", "tool_call_id": f"c{k}", "content": output})
        mask += [1] * per_turn + [0] * per_turn
        turn_of += [2 + 2 * k] * per_turn + [3 + 2 * k] * per_turn
    n = len(mask)
    lp = (-rng.random(n)).round(4).tolist()
    sample = {"step": 0, "reward": float(i % 2), "group_index": i // 8,
              "response_tokens": ["tok"] * n, "logprobs": lp,
              "ref_logprobs": (np.array(lp) - 0.01).round(4).tolist(),
              "entropy": rng.random(n).round(3).tolist()}
    if multi:
        sample.update(messages=messages, loss_mask=mask, token_turns=turn_of)
    else:  # the same texts as one response: the twin differs only by its turns and mask
        sample.update(prompt=messages[1]["content"], response="\n".join(
            str(m["content"]) + orjson.dumps(m.get("tool_calls")).decode() for m in messages))
    return sample


def write(root: Path, samples: int, turns: int, multi: bool) -> Path:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    rng = np.random.default_rng(0)
    with open(root / "rollout_data_rank0.jsonl", "wb") as out:
        for i in range(samples):
            out.write(orjson.dumps(_sample(i, turns, rng, multi)) + b"\n")
    return root


def load_time(root: Path) -> float:
    start = time.perf_counter()
    run = open_run(root, use_cache=False)
    assert len(run.samples), run.problems[:3]
    return time.perf_counter() - start


def server_times(root: Path) -> list[tuple[str, float]]:
    rows = []
    at = board(root, page="responses", step="0")  # the run is loaded: its cost is not timed
    at.query_params["page"] = "sample"
    at.query_params["sample"] = KEY
    at.run()
    rows.append(("open a 201-turn sample (cold read)", at.session_state[RUN_SECONDS]))
    at.run()
    rows.append(("rerun, nothing changed", at.session_state[RUN_SECONDS]))
    at.number_input(key="conv_page").set_value(5).run()
    rows.append(("turn page 5", at.session_state[RUN_SECONDS]))
    at.pills(key="conv").set_value(["tool calls"]).run()
    rows.append(("show tool calls only", at.session_state[RUN_SECONDS]))
    return rows


def browser_times(root: Path, repeat: int, turns: int) -> list[tuple[str, float, int]]:
    from browser import browser_page, served

    idle = "!document.querySelector('[data-testid=\"stStatusWidget\"]')"
    rows: dict[str, list] = {}

    def timed(page, label, url, ready):
        start = time.perf_counter()
        page.goto(url)
        page.wait_for_function(ready, timeout=120_000)
        page.wait_for_function(idle, timeout=120_000)
        nodes = page.evaluate("document.getElementsByTagName('*').length")
        rows.setdefault(label, []).append((time.perf_counter() - start, nodes))

    def timed_action(page, label, action, ready):
        start = time.perf_counter()
        action()
        page.wait_for_function(ready, timeout=120_000)
        page.wait_for_function(idle, timeout=120_000)
        nodes = page.evaluate("document.getElementsByTagName('*').length")
        rows.setdefault(label, []).append((time.perf_counter() - start, nodes))

    # the bubbles drawn and the Sample page's token strips (Plotly) too, so every figure
    # counts the whole page
    first, _, _ = page_of(turns, 5)
    check = (first - 1) // 2  # the first assistant turn (2 + 2k) on page 5 says "check k."
    bubbles = ("document.querySelectorAll('[data-testid=stChatMessage]').length >= {} && "
               "!!document.querySelector('.js-plotly-plot')")
    with served(root, timeout=300) as url, browser_page(1400, 1000) as page:
        page.goto(f"{url}/sample?step=0&sample={KEY}")
        page.get_by_text("Conversation ·").first.wait_for(timeout=180_000)
        for _ in range(repeat):
            timed(page, "open /alerts (yardstick)", f"{url}/alerts?step=0",
                  "!!document.querySelector('h1, h2')")
            timed(page, "open a 201-turn sample", f"{url}/sample?step=0&sample={KEY}",
                  bubbles.format(TURNS_PER_PAGE))
            box = page.get_by_label(re.compile("Turns page"))
            timed_action(page, "turn page 5 (page box)", lambda b=box: (b.fill("5"),
                         b.press("Enter")), "(e => e && e.innerText.includes('Running check"
                         f" {check}.'))(document.querySelector('[data-testid=stMain]'))")
            page.goto(f"{url}/sample?step=0&sample={KEY}")  # back to the first page
            timed(page, "Responses with multi-turn filters", f"{url}/responses?step=0&terr="
                  "with+tool+errors", "!!document.querySelector('[data-testid=stDataFrame]')")
    return [(label, *min(tries)) for label, tries in rows.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=256)
    parser.add_argument("--turns", type=int, default=201)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-browser", action="store_true")
    args = parser.parse_args()
    agent = write(OUT / "agent", args.samples, args.turns, multi=True)
    plain = write(OUT / "agent_single", args.samples, args.turns, multi=False)
    size = (agent / "rollout_data_rank0.jsonl").stat().st_size / 1e6
    print(f"{args.samples} conversations x {args.turns} turns x {TOKENS:,} tokens: {size:.0f} MB")
    multi_s = min(load_time(agent) for _ in range(args.repeat))
    single_s = min(load_time(plain) for _ in range(args.repeat))
    print(f"cold load, multi-turn        {multi_s:6.2f} s")
    twin = (plain / "rollout_data_rank0.jsonl").stat().st_size / 1e6
    print(f"cold load, single-turn twin  {single_s:6.2f} s  (same token arrays and texts, "
          f"{twin:.0f} MB, no turns or mask)")
    for label, seconds in server_times(agent):
        print(f"server  {label:<38} {seconds * 1000:7.0f} ms")
    if not args.skip_browser:
        for label, seconds, nodes in browser_times(agent, args.repeat, args.turns):
            print(f"chromium {label:<37} {seconds * 1000:7.0f} ms  {nodes:6,} DOM nodes")


if __name__ == "__main__":
    main()
