"""A load that makes no progress is given up on with a one-line message, holding up no
other load; a later call tries again.  The index's chunk scan is made to block on an Event,
and every wait in these tests has a timeout, so a regression fails instead of hanging."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from dump_files import line_of, make_sample, write_dump

from loaders.index import refresh as index_refresh
from loaders.serve.catalog import Catalog
from loaders.serve.open_run import DumpError

WAIT = 20.0
STALL = 1.0  # small for a fast test, yet above what a tiny load takes on a busy CI machine


def _dump(root: Path, steps: int = 3) -> Path:
    write_dump(root / "rollout_data_rank_0.jsonl", [make_sample(s) for s in range(steps)])
    return root


class Blocker:
    """Stands in for the index's scan_all: scans of files under `under` wait for `release`
    (only the first `times` of them); others go through at once."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, under: Path, times: int = 1) -> None:
        self.under, self.times = str(under), times
        self.entered, self.release = threading.Event(), threading.Event()
        self.real = index_refresh.scan_all
        monkeypatch.setattr(index_refresh, "scan_all", self)

    def __call__(self, chunks, progress=None, convert=lambda columns: columns):
        if self.times > 0 and any(c.path.startswith(self.under) for c in chunks):
            self.times -= 1
            self.entered.set()
            self.release.wait(WAIT)
        return self.real(chunks, progress, convert)


def _call(work) -> threading.Thread:
    """work() in a daemon thread; its outcome lands in thread.outcome."""
    thread = threading.Thread(target=lambda: setattr(thread, "outcome", _outcome(work)),
                              daemon=True)
    thread.start()
    return thread


def _outcome(work):
    try:
        return work()
    except BaseException as err:  # noqa: BLE001  (the test looks at it)
        return err


def _joined(thread: threading.Thread):
    thread.join(WAIT)
    assert not thread.is_alive(), "hung"
    return thread.outcome


@pytest.fixture
def stall(monkeypatch) -> float:
    monkeypatch.setenv("RL_BOARD_LOAD_STALL_SECONDS", str(STALL))
    return STALL


def test_a_stalled_load_is_a_message_and_another_dir_loads_meanwhile(tmp_path, monkeypatch,
                                                                      stall):
    a, b = _dump(tmp_path / "base" / "a"), _dump(tmp_path / "base" / "b")
    catalog = Catalog(tmp_path / "base")
    blocker = Blocker(monkeypatch, a)
    try:
        slow = _call(lambda: catalog.run(a))
        assert blocker.entered.wait(WAIT)
        assert _joined(_call(lambda: catalog.run(b))).steps == [0, 1, 2]
        err = _joined(slow)
        assert isinstance(err, DumpError) and "\n" not in str(err)
        assert f"loading {a} made no progress for {stall:g} s" in str(err)
        started = time.monotonic()  # given up on just now: the next caller is told at once
        assert isinstance(_joined(_call(lambda: catalog.run(a))), DumpError)
        assert time.monotonic() - started < stall
    finally:
        blocker.release.set()
    # the abandoned load finishes on its own and is kept: no lock stayed held
    deadline = time.monotonic() + WAIT
    while a not in catalog.loaded() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _joined(_call(lambda: catalog.run(a))).steps == [0, 1, 2]


def test_a_later_call_tries_again(tmp_path, monkeypatch, stall):
    a = _dump(tmp_path / "a")
    catalog = Catalog(a)
    blocker = Blocker(monkeypatch, a)  # only the first scan blocks
    try:
        assert isinstance(_joined(_call(lambda: catalog.run(a))), DumpError)
        time.sleep(stall)  # long enough after giving up: a new try, beside the stuck one
        run = _joined(_call(lambda: catalog.run(a)))
        assert run.steps == [0, 1, 2]
    finally:
        blocker.release.set()
    time.sleep(stall)  # the first load ends too, but a later try replaced it
    assert _joined(_call(lambda: catalog.run(a))) is run


def test_a_slow_load_is_waited_for_while_it_reports_progress(tmp_path, monkeypatch, stall):
    a, b = _dump(tmp_path / "a"), _dump(tmp_path / "b")
    blocker = Blocker(monkeypatch, b)  # b's scan is quiet; a's is slow but reports
    quiet = index_refresh.scan_all

    def slow(chunks, progress=None, convert=lambda columns: columns):
        if not any(c.path.startswith(str(a)) for c in chunks):
            return quiet(chunks, progress, convert)
        for i in range(6):  # 1.2 s in all, more than the limit, never quiet for long
            time.sleep(stall * 0.4)
            progress(i, 6)
        # the real scan reports too while it runs: on a loaded machine (CI) it alone can
        # take longer than the limit, and a load that reports is never given up on
        finished = threading.Event()

        def heartbeat() -> None:
            while not finished.wait(stall * 0.3):
                progress(6, 6)

        threading.Thread(target=heartbeat, daemon=True).start()
        try:
            return quiet(chunks, progress, convert)
        finally:
            finished.set()

    monkeypatch.setattr(index_refresh, "scan_all", slow)
    seen: list[tuple[int, int]] = []

    def report(done: int, total: int) -> None:
        seen.append((done, total, threading.current_thread()))

    try:
        assert isinstance(_joined(_call(lambda: Catalog(b).run(b, report))), DumpError)
        assert seen == []
        loader = _call(lambda: Catalog(a).run(a, report))
        assert _joined(loader).steps == [0, 1, 2]
    finally:
        blocker.release.set()
    # reports that come faster than the caller draws are merged into the latest one
    assert len(seen) >= 3 and [d for d, total, _ in seen if total == 6] == sorted(
        d for d, total, _ in seen if total == 6)
    assert all(thread is loader for *_, thread in seen)  # drawn in the caller's own thread


def test_a_stalled_refresh_is_a_message_and_the_old_run_stays(tmp_path, monkeypatch, stall):
    a, b = _dump(tmp_path / "base" / "a"), _dump(tmp_path / "base" / "b")
    catalog = Catalog(tmp_path / "base")
    old_a, old_b = catalog.run(a), catalog.run(b)
    for root in (a, b):
        with open(root / "rollout_data_rank_0.jsonl", "ab") as handle:
            handle.write(line_of(make_sample(3)))
    blocker = Blocker(monkeypatch, a)
    try:
        err = _joined(_call(catalog.refresh))
        assert isinstance(err, DumpError) and "made no progress" in str(err)
        assert catalog.run(a) is old_a  # sessions keep reading what they had
        assert catalog.run(b) is not old_b and catalog.run(b).steps == [0, 1, 2, 3]
    finally:
        blocker.release.set()


def test_the_page_shows_a_stalled_load_and_refresh_as_one_message(tmp_path, monkeypatch,
                                                                   stall):
    from streamlit.testing.v1 import AppTest

    a, b = _dump(tmp_path / "a"), _dump(tmp_path / "b")
    blocker = Blocker(monkeypatch, a)
    try:
        at = AppTest.from_function(_page, args=(str(a),), default_timeout=WAIT).run()
        assert not at.exception and [m.value for m in at.markdown] == ["none"]
        assert len(at.error) == 1 and "made no progress" in at.error[0].value
        at = AppTest.from_function(_page, args=(str(b),), default_timeout=WAIT).run()
        assert [m.value for m in at.markdown] == ["3"]
        with open(b / "rollout_data_rank_0.jsonl", "ab") as handle:
            handle.write(line_of(make_sample(3)))
        blocker.under, blocker.times = str(b), 1
        at.button(key="refresh").click().run()
        assert not at.exception and [m.value for m in at.markdown] == ["3"]  # the old run
        assert len(at.error) == 1 and "made no progress" in at.error[0].value
    finally:
        blocker.release.set()


def _page(base: str) -> None:
    from pathlib import Path

    import streamlit as st

    from pages.frame import loading

    if st.button("Refresh", key="refresh"):
        loading.refresh(Path(base))
    run = loading.load_run(Path(base))
    st.write("none" if run is None else f"{len(run.samples)}")
