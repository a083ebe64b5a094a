"""The board listens on 127.0.0.1 unless the operator says otherwise, and says so when another
address has no --root to go with it (issue 26, section 1)."""
from __future__ import annotations

import html
import os
import subprocess
from pathlib import Path

import pytest
from browser import ROOT, free_port, wait_healthy
from streamlit import config

LISTEN = "0A"  # the TCP state column of /proc/net/tcp


def listening_addresses(port: int) -> set[str]:
    """The local addresses (hex, as the kernel writes them) listening on port, IPv4 and IPv6."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == LISTEN and int(hex_port, 16) == port:
                found.add(address)
    return found


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen(["bash", str(ROOT / "start.sh"), str(ROOT / "samples" / "demo"),
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def stop(proc: subprocess.Popen) -> str:
    """The server's stderr, after it ended (or was ended)."""
    if proc.poll() is None:
        os.killpg(proc.pid, 15)
    return proc.communicate(timeout=30)[1]


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads Linux's socket table")
def test_start_sh_listens_on_loopback_only_by_default():
    """Read from the kernel's own table of listening sockets, so the test does not depend on
    which other interfaces this machine has: 0100007F is 127.0.0.1, 00000000 would be *."""
    port = free_port()
    proc = start(f"--server.port={port}")
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc, 90)
        assert listening_addresses(port) == {"0100007F"}
    finally:
        log = stop(proc)
    assert "warning:" not in log


@pytest.mark.parametrize("root, warned", [(None, True), ("samples", False)])
def test_another_address_without_root_warns_once_at_start(root, warned):
    """192.0.2.1 (TEST-NET-1) is no address of this machine: the warning comes before the
    bind, which then fails, so the test never listens beyond loopback."""
    args = ["--server.address", "192.0.2.1", f"--server.port={free_port()}"]
    proc = start(*args, *(["--root", str(ROOT / root)] if root else []))
    proc.wait(timeout=120)
    warnings = [line for line in stop(proc).splitlines() if line.startswith("warning:")]
    assert len(warnings) == int(warned)
    if warned:
        assert "192.0.2.1 without --root" in warnings[0] and "SSH tunnel" in warnings[0]


@pytest.mark.parametrize("address, root, banner", [
    ("0.0.0.0", None, True), ("", None, True), ("0.0.0.0", "/", False),
    ("127.0.0.1", None, False), ("::1", None, False), ("localhost", None, False)])
def test_the_sidebar_banner_of_a_shared_board(address, root, banner, monkeypatch):
    from apptest import board

    if root:
        monkeypatch.setenv("RL_BOARD_ROOT", root)
    before = config.get_option("server.address")
    config.set_option("server.address", address)
    try:
        at = board(ROOT / "samples" / "demo")
    finally:
        config.set_option("server.address", before)
    shown = [w for w in at.sidebar.warning if "without --root" in html.unescape(str(w.value))]
    assert len(shown) == int(banner)


def test_an_allow_remote_prefix_that_is_no_url_is_said_at_start(monkeypatch, capsys):
    """Left out of what a link may open (it allows nothing), and said once, not in silence."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("serve_script", ROOT / "scripts" / "serve.py")
    serve = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(serve)
    monkeypatch.setenv("RL_BOARD_ALLOW_REMOTE", "gs://team/runs bucket/no-scheme")
    serve.warn_when_shared(["rl_logging_board.py", "--server.address", "127.0.0.1", "--",
                            "--dump-dir", "d", "--allow-remote", "s3:/one-slash",
                            "--allow-remote", "s3://bucket/ok"])
    warnings = capsys.readouterr().err.splitlines()
    assert warnings == [f"warning: --allow-remote {bad!r} is not a URL prefix "
                        "(scheme://bucket[/path]); it allows nothing"
                        for bad in ("bucket/no-scheme", "s3:/one-slash")]
