"""loaders.heap: freed heap pages go back to the system after a load."""
from __future__ import annotations

import sys

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
