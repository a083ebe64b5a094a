"""Starting the real server the way start.sh does, and a headless Chromium to drive it."""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage"]


# idle as a user sees it: no script run under way, and no element still a grey skeleton
# (Streamlit draws one in place of an element whose script chunk is still loading, after
# its status widget has already gone)
IDLE = ("!document.querySelector('[data-testid=\"stStatusWidget\"]') && "
        "!document.querySelector('[data-testid=\"stSkeleton\"]')")


def chromium_path() -> str | None:
    return os.environ.get("RL_BOARD_CHROMIUM")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def served(dump_dir: Path, timeout: float = 90, log_path: Path | None = None
           ) -> Iterator[str]:
    """`bash start.sh DUMP_DIR --server.port N` in the background; yields the base URL.
    The server's output goes to `log_path` (a test reads what the launcher said), by
    default to a temp dir: never beside a dump that may be the committed demo."""
    port = free_port()
    log_path = log_path or Path(tempfile.mkdtemp()) / f"server-{port}.log"
    log = open(log_path, "wb")  # noqa: SIM115
    # the space form of Streamlit's flags, as start.sh's own usage line writes them
    proc = subprocess.Popen(["bash", str(ROOT / "start.sh"), str(dump_dir),
                             "--server.port", str(port), "--server.address", "127.0.0.1"],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, timeout)
        yield url
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=20)
        log.close()


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"server at {url} not healthy after {timeout}s")


@contextlib.contextmanager
def browser_page(width: int = 1400, height: int = 1000) -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as play:
        browser = play.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()


def open_board(page: object, url: str, query: str, wait_text: str) -> None:
    """Load the board with a query string and wait until `wait_text` is visible."""
    page.goto(f"{url}/?{query}")
    page.get_by_text(wait_text, exact=False).first.wait_for(timeout=60_000)
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')",
                           timeout=60_000)


def settle(page: object, pause_ms: int = 300, timeout: int = 60_000) -> None:
    """Idle, and still idle after a pause: a rerun that starts right after the last one
    shows the status widget again."""
    page.wait_for_function(IDLE, timeout=timeout)
    page.wait_for_timeout(pause_ms)
    page.wait_for_function(IDLE, timeout=timeout)
