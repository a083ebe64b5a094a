"""loaders.heap: freed heap pages go back to the system after a load, and a parser worker
keeps its own for its next chunk."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from loaders.heap import give_back


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS"))
    return int(line.split()[1]) / 1024


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_freed_heap_left_by_survivors_is_returned() -> None:
    # blocks above pymalloc's 512 bytes come from malloc; one survivor in 64 pins the heap's
    # top, so plain free() keeps the rest resident, as a load's temporaries do
    blocks = [bytes(4000) + bytes([i % 251]) for i in range(40_000)]  # 160 MB
    survivors = blocks[::64]
    del blocks
    before = _rss_mb()
    assert give_back()
    assert before - _rss_mb() > 100, "malloc_trim returned less than 100 of the 157 MB freed"
    assert len(survivors) == 625


_CHUNKS = """
import resource, sys
from loaders.heap import keep_freed
if sys.argv[1] == "keep":
    assert keep_freed()
def chunk():  # a parser worker's chunk: a big read buffer made, used and let go
    data = bytearray(48 << 20)
    data[::4096] = b"x" * len(data[::4096])
    del data
chunk()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
chunk()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_worker_keeps_its_freed_heap_for_its_next_chunk() -> None:
    """keep_freed: a second chunk's buffer comes from the heap the first one freed, without
    a page fault a page (glibc alone maps it afresh and faults every page in again)."""
    import subprocess

    root = Path(__file__).resolve().parents[2]  # the project: `loaders` importable
    faults = {way: int(subprocess.run([sys.executable, "-c", _CHUNKS, way], check=True,
                                      capture_output=True, text=True, cwd=root).stdout)
              for way in ("keep", "plain")}
    assert faults["plain"] > 10_000 > 1_000 > faults["keep"], faults


_NO_SUBPROCESS = """
import sys
started = []
sys.addaudithook(lambda event, args: started.append(args[0]) if event == "subprocess.Popen"
                 else None)
from loaders.heap import keep_freed
assert keep_freed()
print(started)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_worker_finds_mallopt_without_running_ldconfig() -> None:
    """The interpreter's own symbols hold glibc's mallopt: ctypes.util.find_library, which
    runs `ldconfig -p` in a subprocess (3-4 ms of each parser worker's start), is never
    asked."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    started = subprocess.run([sys.executable, "-c", _NO_SUBPROCESS], check=True,
                             capture_output=True, text=True, cwd=root).stdout.strip()
    assert started == "[]"
