"""Dump dirs on object storage, against a real S3-compatible server (moto, in server mode, in
its own process on 127.0.0.1): discovery, a cold index, growth after an append (the object
rewritten), one sample's load, --root URL prefixes and credentials only from the environment."""
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from dump_files import keyed

from loaders import open_run
from loaders import schema as S
from loaders.find.paths import resolve_dump_dir
from loaders.find.reach import RemoteReach
from loaders.writer import DumpWriter

pytest.importorskip("s3fs", reason="s3fs and moto[server] are installed by tests/run.sh")
boto3 = pytest.importorskip("boto3")
pytest.importorskip("moto")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "samples"))
from generate_dump import write_dump  # noqa: E402

BUCKET = "dumps"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def s3_server():
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p",
                             str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"{url}/moto-api/", timeout=1)  # noqa: S310 - local
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("moto server did not start")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def s3(s3_server, monkeypatch, tmp_path):
    """Credentials and endpoint from the standard AWS environment variables only."""
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": s3_server,
                        "RL_BOARD_CACHE_DIR": str(tmp_path / "cache")}.items():
        monkeypatch.setenv(name, value)
    client = boto3.client("s3")
    client.create_bucket(Bucket=BUCKET)
    yield client
    for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", []):
        client.delete_object(Bucket=BUCKET, Key=item["Key"])
    client.delete_bucket(Bucket=BUCKET)


def upload(client, local: Path, prefix: str) -> None:
    for path in sorted(local.rglob("*")):
        if path.is_file():
            client.upload_file(str(path), BUCKET, f"{prefix}/{path.relative_to(local)}")


def test_a_dump_on_s3_loads_grows_and_reads_samples(s3, tmp_path):
    local = tmp_path / "local"
    write_dump(local, steps=3, ranks=2, samples_per_rank=4, max_tokens=64)
    jsonl = local / "rollout_data_rank_0.jsonl"
    jsonl.write_bytes(jsonl.read_bytes() + b'{"step": 1, "bad\n{"step": 3, "response": "ha')
    with DumpWriter(local / "sub", rank=5, format="parquet") as writer:
        writer.write_many([{"step": 2, "response": f"p{i}", "logprobs": [-0.5],
                            "ref_logprobs": [-0.25], "reward": 1.0} for i in range(3)])
    (local / ".hidden").mkdir()
    (local / ".hidden" / "rollout_data_rank_9.jsonl").write_text('{"step": 0}\n')
    upload(s3, local, "run")

    run = open_run(f"s3://{BUCKET}/run")  # discovery and a cold index
    assert run.cache == "miss" and str(run.root) == f"s3://{BUCKET}/run"
    assert sorted(run.formats) == ["rollout_data_rank_0.jsonl", "rollout_data_rank_1.jsonl",
                                   "sub/rollout_data_rank_5.step_000002.0000.parquet"]
    assert len(run.samples) == 27 and run.bad_lines == 1 and run.pending_bytes > 0
    cache = Path(os.environ["RL_BOARD_CACHE_DIR"])
    assert run.index_path.parent.parent == cache  # kept locally, keyed by the URL
    assert open_run(f"s3://{BUCKET}/run").cache == "hit"

    rows = keyed(run)
    sample = run.sample(rows[S.KEY].iloc[0])  # one sample, by byte range
    assert sample.error is None and len(sample.tokens) > 0
    parquet_key = rows.loc[rows[S.RANK] == 5, S.KEY].iloc[0]
    assert run.sample(parquet_key).texts[S.RESPONSE] == "p0"

    # growth: the object rewritten with the pending line finished and one more line
    s3.put_object(Bucket=BUCKET, Key="run/rollout_data_rank_0.jsonl",
                  Body=jsonl.read_bytes() + b'lf"}\n{"step": 4, "response": "new"}\n')
    grown = open_run(f"s3://{BUCKET}/run")
    assert grown.cache == "partial" and len(grown.samples) == 29 and grown.pending_bytes == 0
    assert set(grown.with_previews(grown.samples)[S.RESPONSE]) >= {"half", "new"}
    assert grown.sample(keyed(grown)[S.KEY].iloc[-1]).error is None


def test_root_url_prefix_and_credentials(s3):
    s3.put_object(Bucket=BUCKET, Key="team/a/rollout_data_rank_0.jsonl", Body=b'{"step": 0}\n')
    path, error = resolve_dump_dir(f"s3://{BUCKET}/team/a", f"s3://{BUCKET}/team")
    assert error is None and str(path) == f"s3://{BUCKET}/team/a"
    assert str(resolve_dump_dir("a", f"s3://{BUCKET}/team")[0]) == f"s3://{BUCKET}/team/a"
    for typed in (f"s3://{BUCKET}/other", f"s3://{BUCKET}/team/../other", "/tmp"):
        path, error = resolve_dump_dir(typed, f"s3://{BUCKET}/team")
        assert path is None and error
    path, error = resolve_dump_dir(f"s3://{BUCKET}/team", "/tmp")
    assert path is None and "outside the allowed root" in error
    path, error = resolve_dump_dir(f"s3://KEY:SECRET@{BUCKET}/team", None)
    assert path is None and "credentials in a URL are not accepted" in error
    operator = RemoteReach.of([f"s3://{BUCKET}/team/nothing"], [])
    assert resolve_dump_dir(f"s3://{BUCKET}/team/nothing", None, reach=operator)[1] \
        .startswith("No such")


def test_cli_on_a_url_and_a_wrong_credential(s3, tmp_path):
    s3.put_object(Bucket=BUCKET, Key="cli/rollout_data_rank_0.jsonl",
                  Body=b'{"step": 0, "response": "a", "reward": 1}\n')
    proc = subprocess.run([sys.executable, "-m", "loaders", f"s3://{BUCKET}/cli", "--json"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert '"samples": 1' in proc.stdout
    env = {**os.environ, "AWS_ENDPOINT_URL": "http://127.0.0.1:9"}  # nothing listens there
    proc = subprocess.run([sys.executable, "-m", "loaders", f"s3://{BUCKET}/cli"], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2 and proc.stderr.startswith("error: cannot reach s3://")
    assert "Traceback" not in proc.stderr


def test_the_board_opens_a_dump_dir_url(s3, tmp_path, monkeypatch):
    from apptest import board, errors, goto, texts

    local = tmp_path / "local"
    write_dump(local, steps=2, ranks=1, samples_per_rank=3, max_tokens=32)
    upload(s3, local, "page")
    monkeypatch.setenv("RL_BOARD_DUMP_DIR", f"s3://{BUCKET}/page")  # the operator's URL
    at = board(f"s3://{BUCKET}/page")
    assert errors(at) == []
    assert "Follow is off for dump dirs on object storage" in texts(at)
    at = goto(at, "responses")
    assert errors(at) == [] and at.dataframe and len(at.dataframe[0].value) == 3
    at = goto(at, "sample")
    assert errors(at) == [] and "changed on disk" not in texts(at)


def test_the_board_keeps_to_a_root_url_prefix(s3, monkeypatch):
    from apptest import board, errors

    s3.put_object(Bucket=BUCKET, Key="team/a/rollout_data_rank_0.jsonl",
                  Body=b'{"step": 0, "response": "a", "reward": 1}\n')
    s3.put_object(Bucket=BUCKET, Key="other/rollout_data_rank_0.jsonl", Body=b'{"step": 0}\n')
    monkeypatch.setenv("RL_BOARD_ROOT", f"s3://{BUCKET}/team")
    assert errors(board(f"s3://{BUCKET}/team/a")) == []
    refused = errors(board(f"s3://{BUCKET}/other"))
    assert refused and "outside the allowed root" in refused[0]


def test_a_link_opens_a_url_only_under_the_operators_own(s3, monkeypatch, tmp_path):
    """Without --root, a `?dir=` URL opens under an --allow-remote prefix (or the operator's
    dump dir); another bucket, `..` spelled as %2e%2e and a version query are refused before
    the store is asked."""
    from apptest import board, errors

    for key in ("team/a/rollout_data_rank_0.jsonl", "other/rollout_data_rank_0.jsonl"):
        s3.put_object(Bucket=BUCKET, Key=key, Body=b'{"step": 0, "response": "a"}\n')
    monkeypatch.setenv("RL_BOARD_DUMP_DIR", str(tmp_path))
    assert "is outside a URL the board was started with" in errors(
        board(f"s3://{BUCKET}/team/a"))[0]
    monkeypatch.setenv("RL_BOARD_ALLOW_REMOTE", f"s3://{BUCKET}/team")
    assert errors(board(f"s3://{BUCKET}/team/a")) == []
    for typed in (f"s3://{BUCKET}/other", f"s3://{BUCKET}/team/%2e%2e/other",
                  f"s3://{BUCKET}/team/a?versionId=1#x"):
        refused = errors(board(typed))
        assert len(refused) == 1 and refused[0].startswith(("Refused", "not a usable")), typed
