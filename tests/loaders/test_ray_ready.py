"""A Ray cluster is made ready before the build: every CPU's worker started, the scan
imported (loaders.index.on_ray._ready), so a build's first tasks do not wait for them."""
import fcntl
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson
import pytest

pytest.importorskip("ray", reason="ray is installed by tests/run.sh (requirements-dev)")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "samples"))
from generate_dump import write_dump  # noqa: E402

# in a process of its own, a local Ray of 2 CPUs: two tasks that overlap, each saying
# whether its worker had the scan imported before the task began
PROBE = """
import os, sys, time
import orjson, ray
from loaders.index.on_ray import connect

seconds = connect(None, 2)

@ray.remote(num_cpus=1)
def probe():
    ready = "loaders.index.lines" in sys.modules
    time.sleep(0.5)
    return os.getpid(), ready

print(orjson.dumps({"seconds": seconds, "workers": ray.get([probe.remote(), probe.remote()])}
                   ).decode())
"""


# a local Ray of 2 CPUs one of which a long task holds (a training job's, say): the
# warm-up uses the free one and never waits for the held one (a warm-up that waited for
# every CPU to start a worker would wait out its timeout here)
BUSY = """
import sys, time
from pathlib import Path
import orjson, ray
from loaders.index import on_ray

code = str(Path(on_ray.__file__).resolve().parents[1])
ray.init(num_cpus=2, runtime_env={"py_modules": [code]}, log_to_driver=False,
         include_dashboard=False)

@ray.remote(num_cpus=1)
def hold():
    time.sleep(90)

held = hold.remote()
while ray.available_resources().get("CPU", 0) > 1:
    time.sleep(0.05)
started = time.perf_counter()
on_ray._ready(ray)
print(orjson.dumps({"seconds": time.perf_counter() - started}).decode())
"""


@pytest.fixture
def ray_lock():
    """One local Ray at a time on this machine (as test_index_ray's fixture)."""
    with open(Path(tempfile.gettempdir()) / "rl_board_ray.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def test_every_worker_is_ready_before_the_first_task(ray_lock):
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = orjson.loads(proc.stdout.strip().splitlines()[-1])
    (first, ready_1), (second, ready_2) = got["workers"]
    assert first != second  # two workers, both started by connect
    assert ready_1 and ready_2
    assert got["seconds"] > 0


def test_a_cpu_another_task_holds_is_not_waited_for(ray_lock):
    proc = subprocess.run([sys.executable, "-c", BUSY], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    seconds = orjson.loads(proc.stdout.strip().splitlines()[-1])["seconds"]
    assert seconds < 0.5 * 30  # on_ray.WARM_TIMEOUT: a wait for the held CPU reaches it


def test_index_command_reports_the_clusters_start_apart(tmp_path, ray_lock):
    write_dump(tmp_path, steps=2, ranks=2, samples_per_rank=3, max_tokens=16)
    proc = subprocess.run([sys.executable, "-m", "loaders", "index", str(tmp_path), "--ray",
                           "--num-cpus", "2", "--json"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    info = orjson.loads(proc.stdout)
    assert info["samples"] == 12 and info["cache"] == "miss"
    assert info["ray_ready_seconds"] > 0 and info["seconds"] > 0
    local = subprocess.run([sys.executable, "-m", "loaders", "index", str(tmp_path)],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert local.returncode == 0 and "index (hit)" in local.stdout
    assert "Ray ready" not in local.stdout
