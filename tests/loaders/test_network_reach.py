"""A link never makes the server reach the network (issue 26, section 1).

Every scheme, through every URL parameter that names a path (`dir`, `metrics`, Compare
runs' `extra`, `tokenizer`), is opened by the real board (AppTest through the entry script)
in a process of its own whose every name lookup and connection is recorded by an audit hook
(tests/net_audit.py).  Two independent witnesses must both see nothing: the audit hook
(which also sees an attempt that nothing answers: the metadata address 169.254.169.254, a
DNS name), and a TCP listener on 127.0.0.1 that the URLs and AWS_ENDPOINT_URL point at
(which also sees connections from other processes).  The controls show
both witnesses work: the operator's own URL is still fetched, and with the metadata probe
turned back on botocore asks 169.254.169.254.
"""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from dump_files import make_sample, write_dump

ROOT = Path(__file__).resolve().parents[2]
METADATA = "169.254.169.254"


class Listener:
    """A TCP listener on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # closed
                return
            self.accepted += 1
            conn.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    here = Listener()
    yield here
    here.sock.close()


def urls(port: int) -> list[str]:
    """One URL of every kind a link could carry: each fsspec protocol family, the metadata
    address, a bucket escape by percent-encoding, a version query and a fragment."""
    local = f"127.0.0.1:{port}"
    return [f"http://{local}/run", f"https://{local}/run", f"HTTP://{local}/run",
            f"http://{METADATA}/latest/meta-data/", f"ftp://{local}/run",
            f"sftp://{local}/run", f"webhdfs://{local}/run", f"hdfs://{local}/run",
            "github://owner:repo@main/run", "zip://x/y", "tar://x/y", "file:///tmp",
            "memory://run", f"smb://{local}/run", "s3://bucket/run", "s3a://bucket/run",
            "s3://bucket/team/%2e%2e/x", "s3://bucket/team/run?versionId=1#x",
            "gs://bucket/run", "gcs://bucket/run", "abfs://box/run", "az://box/run",
            "oss://bucket/run", f"simplecache::http://{local}/run"]


def audited(cases: list[dict[str, str]], env: dict[str, str]) -> list[dict]:
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "net_audit.py"),
                           json.dumps(cases)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def board_env(tmp_path: Path, port: int, dump_dir: str) -> dict[str, str]:
    """The board's environment: no AWS credentials, the S3 endpoint on the listener, and no
    proxy (one would carry a connection to the metadata address to the proxy's instead)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_", "RL_BOARD_")) and not k.lower().endswith("_proxy")}
    env.update({"RL_BOARD_DUMP_DIR": dump_dir, "RL_BOARD_CACHE_DIR": str(tmp_path / "cache"),
                "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
                "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no"),
                "AWS_CONFIG_FILE": str(tmp_path / "no")})
    return env


@pytest.fixture
def local_run(tmp_path: Path) -> Path:
    write_dump(tmp_path / "run" / "rollout_rank_0.jsonl",
               [make_sample(step, seed=i) for step in (0, 1) for i in range(2)])
    return tmp_path / "run"


_CODE = re.compile(r"(`+) .*? \1(?!`)")


def test_no_url_parameter_reaches_the_network(tmp_path, listener, local_run):
    cases = []
    for url in urls(listener.port):
        cases += [{"dir": url}, {"dir": str(local_run), "metrics": url, "page": "problems"},
                  {"dir": str(local_run), "tokenizer": url, "page": "problems"},
                  {"dir": str(local_run), "extra": url, "page": "runs"}]
    results = audited(cases, board_env(tmp_path, listener.port, str(local_run)))
    assert [r for r in results if r["events"]] == []
    assert listener.accepted == 0
    for result in results:
        assert result["exceptions"] == [], result
        assert len(result["errors"]) == 1 and "Traceback" not in result["errors"][0], result
        assert "\n" not in result["errors"][0].strip()
        # shown as text: a `://` only inside inline code, which GFM never links
        assert all("://" not in _CODE.sub("", raw) for raw in result["raw_errors"]), result


def test_the_operators_url_is_still_opened(tmp_path, listener):
    """The control of the listener witness: the operator's own http:// dump dir is fetched
    (and fails on a listener that says nothing, in one line); the same URL with a sub-path
    from a link is refused, and nothing more arrives."""
    url = f"http://127.0.0.1:{listener.port}/run"
    env = board_env(tmp_path, listener.port, url)
    [own] = audited([{"dir": url}], env)
    assert listener.accepted > 0 and own["events"] and own["exceptions"] == []
    accepted = listener.accepted
    [sub] = audited([{"dir": url + "/sub"}], env)
    assert sub["events"] == [] and listener.accepted == accepted
    assert "never opened from a link" in sub["errors"][0]


@pytest.mark.parametrize("metadata_disabled", [None, "false"])
def test_an_operators_s3_url_never_asks_the_metadata_address(tmp_path, listener,
                                                             metadata_disabled):
    """With no AWS credentials set, botocore's last resort is the instance metadata address.
    The board turns that off unless the operator set AWS_EC2_METADATA_DISABLED; set to false
    (the control) the probe is seen, so its absence is not the witness missing it."""
    env = board_env(tmp_path, listener.port, "s3://bucket/run")
    if metadata_disabled is not None:
        env["AWS_EC2_METADATA_DISABLED"] = metadata_disabled
    [result] = audited([{"dir": "s3://bucket/run"}], env)
    asked_metadata = any(METADATA in event for event in result["events"])
    assert asked_metadata == (metadata_disabled == "false"), result["events"]
    assert result["exceptions"] == [] and len(result["errors"]) == 1
