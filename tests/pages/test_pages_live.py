"""Follow: on by default for a run written just now, the step keeps to the newest unless
pinned, and the live indicator.  (The timer itself runs in tests/browser/test_browser_live.py.)"""
from __future__ import annotations

import os
import time

from apptest import board, texts
from dump_files import line_of, make_sample

from pages.frame import live
from pages.frame.loading import follower


def _append_step(root, step: int) -> None:
    time.sleep(0.6)  # polls closer together than half the 1 s interval share one answer
    for rank in range(2):
        with open(root / f"rollout_data_rank_{rank}.jsonl", "ab") as handle:
            handle.write(b"".join(line_of(make_sample(step, seed=rank * 10 + i))
                                  for i in range(4)))


def _tick(root) -> None:
    """What the Follow timer does between page runs (AppTest runs no timers): poll the
    run's files; the page run after it shows what the poll found."""
    follower(root.resolve(), root.resolve(), 0.0).poll()


def _toggle(at, key: str):
    return next(t for t in at.sidebar.toggle if t.key == key)


def test_follow_is_on_for_a_run_written_just_now(dump_dir):
    at = board(dump_dir)
    assert not at.exception, at.exception
    assert _toggle(at, "follow").value is True
    assert "live · last line" in "\n".join(c.value for c in at.sidebar.caption)


def test_follow_is_off_for_a_quiet_run(dump_dir):
    hour_ago = time.time_ns() - 3600 * 10**9
    for path in dump_dir.glob("*.jsonl"):
        os.utime(path, ns=(hour_ago, hour_ago))
    at = board(dump_dir)
    assert _toggle(at, "follow").value is False
    assert "live ·" not in "\n".join(c.value for c in at.sidebar.caption)


def test_a_new_step_is_shown_and_the_step_follows_it(dump_dir):
    at = board(dump_dir)
    assert at.sidebar.select_slider(key="step").value == 2
    _append_step(dump_dir, 3)
    at.run()  # a page run alone never polls: it draws what the last poll found
    assert "24 samples · 3 steps" in texts(at)
    _tick(dump_dir)
    at.run()
    assert "32 samples · 4 steps" in texts(at)
    assert at.sidebar.select_slider(key="step").value == 3
    assert "step" not in at.query_params  # the newest step is the slider's default


def test_a_picked_step_stays_pinned(dump_dir):
    at = board(dump_dir)
    at.sidebar.select_slider(key="step").set_value(1).run()
    _append_step(dump_dir, 3)
    _tick(dump_dir)
    at.run()
    assert "32 samples · 4 steps" in texts(at)
    assert at.sidebar.select_slider(key="step").value == 1


def test_without_follow_there_is_no_poller(dump_dir, monkeypatch):
    asked = []
    monkeypatch.setattr(live, "follower", lambda *args: asked.append(args))
    at = board(dump_dir, follow="false")
    assert _toggle(at, "follow").value is False and asked == []
    _append_step(dump_dir, 3)
    at.run()
    assert "24 samples · 3 steps" in texts(at) and asked == []
