"""The index build on Ray: the same index, row for row, as the local build."""
import fcntl
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from loaders import open_run
from loaders.index import work
from loaders.index.ondisk import load_index
from loaders.writer import DumpWriter

ray = pytest.importorskip("ray", reason="ray is installed by tests/run.sh (requirements-dev)")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "samples"))
from generate_dump import write_dump  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray of 2 CPUs; one at a time on this machine (xdist may run these tests in
    two workers, and two local clusters at once only compete for the 2 cores)."""
    from loaders.index.on_ray import connect

    with open(Path(tempfile.gettempdir()) / "rl_board_ray.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        connect(None, num_cpus=2)
        yield
        ray.shutdown()


def odd_dump(root: Path) -> Path:
    """A dump of many chunks, with a bad line, a Parquet file and a pending partial line."""
    write_dump(root, steps=6, ranks=2, samples_per_rank=12, max_tokens=200, group_size=4)
    with open(root / "rollout_data_rank_0.jsonl", "ab") as handle:
        handle.write(b'{"step": 2, "broken\n[1, 2]\n{"step": 6, "response": "half')
    with DumpWriter(root / "sub", rank=3, format="parquet") as writer:
        writer.write_many([{"step": 1, "response": f"r{i}", "logprobs": [-0.5, -1.0],
                            "ref_logprobs": [-0.4, -1.0], "reward": i / 4} for i in range(5)])
    return root


def index_table(root: Path) -> tuple[pd.DataFrame, dict]:
    stored = load_index(root)
    files = {rel: (s.parsed_until, s.lines, s.bad_lines, s.pending_bytes, s.format)
             for rel, s in stored.files.items()}
    return stored.frame, {"files": files, "problems": stored.problems}


def test_ray_build_is_the_local_build_row_for_row(tmp_path, local_ray, monkeypatch):
    from loaders.index.on_ray import ray_scanner

    monkeypatch.setattr(work, "CHUNK_BYTES", 64 << 10)  # several chunks a file
    local = odd_dump(tmp_path / "local")
    remote = tmp_path / "ray"
    shutil.copytree(local, remote)
    open_run(local)
    report = []

    class Lines:
        def write(self, text):
            report.append(text)

        def flush(self):
            pass

    run = open_run(remote, scanner=ray_scanner(Lines(), every=0.0))
    assert run.cache == "miss" and run.bad_lines == 2 and run.pending_bytes > 0
    assert report and report[-1].startswith("ray: ") and "tasks" in report[-1]
    a, meta_a = index_table(local)
    b, meta_b = index_table(remote)
    assert meta_a == meta_b
    pd.testing.assert_frame_equal(a, b)
    # the same index files: the board reads the Ray-built one as a hit
    assert open_run(remote).cache == "hit"
    # growth: the pending line is finished, and only new bytes are scanned on Ray
    with open(remote / "rollout_data_rank_0.jsonl", "ab") as handle:
        handle.write(b'"}\n')
    grown = open_run(remote, scanner=ray_scanner(None))
    assert grown.cache == "partial" and grown.pending_bytes == 0
    assert grown.with_previews(grown.samples)["response"].eq("half").sum() == 1


def scan_dying_once(chunk):
    """scan_chunk, but the first task of a run kills its worker (an OOM kill, a lost node)."""
    import os

    from loaders.index.pool import scan_chunk

    marker = Path(chunk.path).parent / ".died_once"
    if not marker.exists():
        marker.write_text("x")
        os._exit(1)
    return scan_chunk(chunk)


def test_a_task_whose_worker_dies_is_retried(tmp_path, local_ray):
    from loaders.index.on_ray import ray_scanner

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers lack tests/
    write_dump(tmp_path / "a", steps=2, ranks=2, samples_per_rank=3, max_tokens=16)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    run = open_run(tmp_path / "b", scanner=ray_scanner(None, task=scan_dying_once))
    assert (tmp_path / "b" / ".died_once").exists() and run.cache == "miss"
    open_run(tmp_path / "a")
    pd.testing.assert_frame_equal(index_table(tmp_path / "a")[0], index_table(tmp_path / "b")[0])


def test_index_command_says_when_ray_is_missing(tmp_path):
    write_dump(tmp_path, steps=1, ranks=1, samples_per_rank=2, max_tokens=16)
    code = ("import sys, builtins; real = builtins.__import__\n"
            "def fake(name, *a, **k):\n"
            "    if name == 'ray': raise ImportError(name)\n"
            "    return real(name, *a, **k)\n"
            "builtins.__import__ = fake\n"
            "from loaders.__main__ import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-c", code, "index", str(tmp_path), "--ray"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and "optional `ray` package" in proc.stderr
    ok = subprocess.run([sys.executable, "-m", "loaders", "index", str(tmp_path)], cwd=ROOT,
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "index (miss)" in ok.stdout
    assert pq.read_table(tmp_path / ".rl_board_cache" / "index.parquet").num_rows == 2
