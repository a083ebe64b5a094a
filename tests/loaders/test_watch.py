"""python -m loaders watch: a run followed without a browser, each new strong incident sent once.

Every test serves a real generic webhook on 127.0.0.1 (http.server in a thread) and sends to
it through apprise's json:// notifier; the runs are samples/generate_alert_runs.py's, written
by samples/write_alert_run.py (the reference writer and verl's metrics log).
"""
from __future__ import annotations

import http.server
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from loaders.index.ondisk import index_dir
from loaders.serve import outbox as O
from loaders.serve.outbox import LOG_NAME, Outbox

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from samples.generate_alert_runs import make_run  # noqa: E402
from samples.write_alert_run import write_run  # noqa: E402


class Hook:
    """A webhook on 127.0.0.1: the JSON bodies it was sent; the first `fail` get a 500."""

    def __init__(self, fail: int = 0) -> None:
        self.bodies: list[dict] = []
        self.tries = 0
        self.fail = fail
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                hook.tries += 1
                if hook.tries <= hook.fail:
                    self.send_response(500)
                else:
                    hook.bodies.append(orjson.loads(body))
                    self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"json://127.0.0.1:{self.server.server_address[1]}/hook"


@pytest.fixture
def hook() -> Iterator[Hook]:
    found = Hook()
    yield found
    found.server.shutdown()


def _watch(root: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "loaders", "watch", str(root), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def _log(root: Path) -> list[dict]:
    path = index_dir(root) / LOG_NAME
    return [orjson.loads(line) for line in path.read_bytes().splitlines()] \
        if path.exists() else []


def test_a_fault_is_one_message_and_a_second_watch_sends_nothing(tmp_path, hook):
    root = write_run(make_run(seed=3, n=32, steps=80, fault="kl_drift", onset=50),
                     tmp_path / "run")
    done = _watch(root, "--notify", hook.url, "--once", "--board-url", "http://board:8901")
    assert done.returncode == 0, done.stderr
    assert len(hook.bodies) == 1, hook.bodies
    body = hook.bodies[0]
    assert body["title"].startswith("RL board: kl_drift (strong)") and "steps 50-" in body[
        "title"]
    assert "rule: kl_drift" in body["message"] and "ref_kl_z:" in body["message"]
    assert f"open: http://board:8901/alerts?dir={str(root).replace('/', '%2F')}&step=" in body[
        "message"]
    found, delivered = [r for r in _log(root) if "found_at" in r], [
        r for r in _log(root) if "delivered_at" in r]
    assert [r["incident"] for r in found] == ["kl_drift@50"] == [
        r["incident"] for r in delivered]
    assert hook.url not in (index_dir(root) / LOG_NAME).read_text()  # a hash, not the URL
    again = _watch(root, "--notify", hook.url, "--once")
    assert again.returncode == 0 and len(hook.bodies) == 1


def test_a_healthy_run_sends_nothing(tmp_path, hook):
    root = write_run(make_run(seed=3, n=32, steps=80), tmp_path / "run")
    done = _watch(root, "--notify", hook.url, "--once")
    assert done.returncode == 0, done.stderr
    assert hook.bodies == [] and hook.tries == 0 and _log(root) == []


def test_a_failing_notifier_is_retried_and_never_stops_the_watch(tmp_path, monkeypatch):
    failing = Hook(fail=2)
    monkeypatch.setattr(O, "BACKOFF_SECONDS", 0.05)
    from loaders.cli_watch import apprise_sender, drained

    box = Outbox(tmp_path / LOG_NAME, [failing.url], apprise_sender([failing.url]))
    assert box.add("kl_drift@50", "title", "body", {"rule": "kl_drift"})
    assert not box.add("kl_drift@50", "title", "body", {})  # known: not queued twice
    assert drained(box, 10.0)
    assert failing.tries == 3 and len(failing.bodies) == 1  # two 500s, then delivered
    assert box.pending[:] == []
    later = Outbox(tmp_path / LOG_NAME, [failing.url], apprise_sender([failing.url]))
    assert later.pending == [] and not later.add("kl_drift@50", "t", "b", {})
    failing.server.shutdown()


def test_what_a_down_notifier_missed_is_sent_by_the_next_watch(tmp_path):
    root = write_run(make_run(seed=3, n=32, steps=80, fault="kl_drift", onset=50),
                     tmp_path / "run")
    down = Hook(fail=1000)  # answers 500 to everything, for now
    done = _watch(root, "--notify", down.url, "--once", "--drain", "0.5")
    assert done.returncode == 3 and "kl_drift@50 not sent to json://#" in done.stderr
    assert down.bodies == [] and down.tries >= 1
    assert [r["incident"] for r in _log(root)] == ["kl_drift@50"]  # written down anyway
    other = Hook()
    added = _watch(root, "--notify", other.url, "--once")  # a notifier added later: it
    assert added.returncode == 0 and other.bodies == []  # gets new incidents, not the past
    down.fail = 0  # back up
    again = _watch(root, "--notify", down.url, "--once")
    assert again.returncode == 0 and len(down.bodies) == 1
    assert _watch(root, "--notify", down.url, "--once").returncode == 0
    assert len(down.bodies) == 1
    down.server.shutdown()
    other.server.shutdown()


def test_at_most_per_minute_messages_a_notifier(tmp_path, hook, monkeypatch):
    from loaders.cli_watch import apprise_sender

    now = [1000.0]
    box = Outbox(tmp_path / LOG_NAME, [hook.url], apprise_sender([hook.url]),
                 clock=lambda: now[0])
    for i in range(O.PER_MINUTE + 3):
        box.add(f"rule@{i}", f"t{i}", "b", {})
    assert box.flush() == O.PER_MINUTE and len(box.pending) == 3
    now[0] += 61
    assert box.flush() == 3 and [b["title"] for b in hook.bodies] == [
        f"t{i}" for i in range(O.PER_MINUTE + 3)]


def _write_steps(src: Path, dst: Path, first: int, last: int) -> None:
    """Append src's lines of steps first..last to dst's dump and metrics files, a step at a
    time over every file, as a synchronous trainer's ranks write them."""
    lines = {path.name: path.read_bytes().splitlines(keepends=True)
             for path in src.iterdir() if path.suffix == ".jsonl"}
    for step in range(first, last + 1):
        for name, found in lines.items():
            with open(dst / name, "ab") as handle:
                handle.write(b"".join(line for line in found
                                      if orjson.loads(line)["step"] == step))


def test_a_followed_run_sends_its_incident_once_its_step_completes(tmp_path, hook):
    whole = write_run(make_run(seed=3, n=32, steps=80, fault="kl_drift", onset=50),
                      tmp_path / "whole")
    live = tmp_path / "live"
    live.mkdir()
    _write_steps(whole, live, 0, 49)
    watch = subprocess.Popen(
        [sys.executable, "-m", "loaders", "watch", str(live), "--notify", hook.url,
         "--interval", "0.2", "--settle", "3600"], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(4)
        assert hook.bodies == []  # healthy so far
        _write_steps(whole, live, 50, 50)  # step 50: not complete while it is the newest
        time.sleep(3)
        assert hook.bodies == []
        _write_steps(whole, live, 51, 52)  # a later step: 50 is complete
        _wait(lambda: len(hook.bodies) == 1, 30)
        _write_steps(whole, live, 53, 80)  # the incident goes on: still one message
        time.sleep(4)
        assert [b["title"] for b in hook.bodies] == [hook.bodies[0]["title"]]
        assert "kl_drift" in hook.bodies[0]["title"]
    finally:
        watch.send_signal(signal.SIGTERM)
        code = watch.wait(30)
    assert code == 0, watch.stderr.read()


def _wait(done: object, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not done():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def test_a_bad_url_or_dir_is_one_line(tmp_path):
    done = _watch(tmp_path, "--notify", "nosuch://x")
    assert done.returncode == 2 and "not a notifier URL apprise knows" in done.stderr
    gone = _watch(tmp_path / "absent", "--once")
    assert gone.returncode == 2 and "no such directory" in gone.stderr
    assert os.path.exists(tmp_path)


def test_an_incident_whose_start_moves_is_still_the_one_handed_on(tmp_path):
    from loaders.health.alerts import STRONG, Alert
    from loaders.health.incidents import Incident
    from loaders.serve.watcher import Watch, WatchOptions

    def incident(start: int, end: int, rule: str = "kl_drift") -> Incident:
        hits = tuple(Alert(rule, STRONG, step) for step in range(start, end + 1))
        return Incident(f"{rule}@{start}", rule, STRONG, start, start, end, hits)

    box = Outbox(tmp_path / LOG_NAME, [], lambda url, title, body: True)
    watch = Watch(WatchOptions(tmp_path), box)
    assert watch._new(incident(50, 52), gap=1)
    assert not watch._new(incident(49, 60), gap=1)  # the trend learnt more: same one
    assert not watch._new(incident(51, 70), gap=1)
    assert watch._new(incident(75, 78), gap=1)  # quiet from 71 to 74: a new one
    assert watch._new(incident(50, 52, rule="divergence"), gap=1)  # another rule
    box.add("kl_drift@50", "t", "b", {"rule": "kl_drift", "key": "", "start": 50, "end": 70})
    restarted = Watch(WatchOptions(tmp_path), Outbox(tmp_path / LOG_NAME, [], box.send))
    assert not restarted._new(incident(48, 55), gap=1)  # known from alerts.jsonl


def test_a_notifier_url_is_logged_without_its_secret_and_backoff_stays_bounded(tmp_path):
    secret = "tgram://123456789:AAEsecretTOKEN/chatid"
    assert "secret" not in O.shown(secret) and O.shown(secret).startswith("tgram://#")
    now = [0.0]
    box = Outbox(tmp_path / LOG_NAME, [secret], lambda url, title, body: False,
                 clock=lambda: now[0])
    box.add("rule@1", "t", "b", {})
    for _ in range(1100):  # a notifier revoked for good: a week of tries, never a crash
        box.flush()
        now[0] = box.pending[0].due
    assert box.pending[0].tries == 1100 and box.pending[0].due - now[0] <= O.MAX_BACKOFF
    assert "secret" not in (tmp_path / LOG_NAME).read_text()


def test_a_second_watcher_of_a_run_is_refused_and_a_killed_one_leaves_no_lock(tmp_path, hook):
    """A cron --once beside a running watch would find the same incident and send it again:
    it exits 4 naming the running one; once that one is killed (-9), the run is free."""
    root = write_run(make_run(seed=3, n=32, steps=80, fault="kl_drift", onset=50),
                     tmp_path / "run")
    first = subprocess.Popen(
        [sys.executable, "-m", "loaders", "watch", str(root), "--notify", hook.url,
         "--interval", "0.2", "--settle", "0"], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        _wait(lambda: len(hook.bodies) == 1, 60)
        second = _watch(root, "--notify", hook.url, "--once")
        assert second.returncode == 4, second.stderr
        assert f"another watcher (pid {first.pid}) is watching" in second.stderr
        assert len(hook.bodies) == 1
    finally:
        first.kill()  # SIGKILL: no handler runs; the kernel lets the lock go
        first.wait(30)
    after = _watch(root, "--notify", hook.url, "--once")
    assert after.returncode == 0, after.stderr
    assert len(hook.bodies) == 1  # delivered by the first: not again


def test_a_lock_is_not_kept_by_a_forked_child_and_no_flock_is_no_lock(tmp_path, monkeypatch):
    """The watch forks the index's workers: a child must not keep the run locked once the
    watcher is gone; and a file system without flock (ENOLCK) is a watch without a lock,
    not "another watcher"."""
    import errno
    import fcntl

    from loaders.serve.watch_lock import LOCK_NAME, hold

    held = hold(tmp_path)
    assert held is not None
    read, write = os.pipe()
    ready_read, ready_write = os.pipe()
    child = os.fork()
    if child == 0:  # the child (its fork hooks run) waits, alive, until the parent has tried
        os.write(ready_write, b"x")
        os.read(read, 1)
        os._exit(0)
    os.read(ready_read, 1)
    try:
        held.close()  # the watcher gone; its child still runs
        with open(tmp_path / LOCK_NAME, "a+b") as again:
            fcntl.flock(again.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: no error
    finally:
        os.write(write, b"x")
        os.waitpid(child, 0)

    def no_flock(fd: int, how: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_flock)
    assert hold(tmp_path / "other") is None
