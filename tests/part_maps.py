"""Worker parts sent through shared memory from real child processes
(loaders.index.shared_part), and what this process holds of them: their maps, the pages
resident in those maps, and the bytes their files hold.  Every child comes from a fork
server (one thread), never from a fork of the test process, whose other threads' locks a
fork would copy."""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import time
import types
from collections.abc import Callable, Iterator
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from pathlib import Path
from queue import Empty
from typing import Any

import pandas as pd
import pyarrow as pa

from loaders.index import shared_part as SP

_NAME = "rl-board-part"  # shared_part's memfd name, as /proc/self/maps shows it


def _send(queue: Queue, table: pa.Table) -> None:
    queue.put(SP.shared(table))
    queue.get()  # stay alive until the parent has read it (as a pool's worker does)


def received_from_a_child(table: pa.Table) -> pa.Table:
    """The table as a child process sends it and this process reads it (a SharedPart).

    The child comes from a fork server, as the board server's workers do: a plain fork of a
    test process copies the locks its other threads hold (a test worker runs several), and
    a child that blocks on one never sends.  The fork server loads this process's __main__,
    which an AppTest run may have left as its own script, so the child gets an empty one."""
    queue, child = _started(_send, table)
    try:
        sent = _first_sent(queue, child)
        assert isinstance(sent, SP.SharedPart) and sent.rows == table.num_rows
        return SP.received(sent)
    finally:
        queue.put(None)
        child.join(60)


def opened_in_one_thread(root: Path) -> tuple[str, list[str], int, pd.DataFrame]:
    """The run at root opened by the worker pool in a process of one thread, as the CLI's:
    (the pool's start method there, the kinds of rows its workers sent, the parts' maps
    left after the sort, the samples).  The process comes from a fork server, so the pool
    forks its workers by its own rule, never from a test process of several threads."""
    queue, child = _started(_open_with_workers, str(root))
    try:
        return _first_sent(queue, child)
    finally:
        child.join(60)


def _open_with_workers(queue: Queue, root: str) -> None:
    from loaders import open_run
    from loaders.index import chunk, pool

    pool.INLINE_BYTES = 0  # workers, whatever the size
    chunk.SMALL_CHUNK_BYTES = 0  # a task a file, not one bundle
    seen, original = [], SP.received
    SP.received = lambda rows: seen.append(type(rows).__name__) or original(rows)
    method = pool._start_method()
    samples = open_run(root, use_cache=False).samples
    queue.put((method, sorted(set(seen)), len(mapped_parts()), samples))


def _started(target: Callable[..., None], *args: object) -> tuple[Queue, BaseProcess]:
    """target(queue, *args) started in a child of a fork server, and the queue it puts to."""
    context = multiprocessing.get_context("forkserver")
    queue = context.Queue()
    child = context.Process(target=target, args=(queue, *args))
    with _empty_main():
        child.start()
    return queue, child


def _first_sent(queue: Queue, child: BaseProcess) -> Any:  # noqa: ANN401 - what was sent
    """What the child put first; a child that ended without sending fails at once."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            return queue.get(timeout=0.2)
        except Empty:
            assert child.is_alive(), f"the child ended without sending: exit code {child.exitcode}"
    raise AssertionError("the child sent nothing in 60 s")


@contextlib.contextmanager
def _empty_main() -> Iterator[None]:
    held = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = held


def mapped_parts() -> list[str]:
    """This process's maps of parts' files (/proc/self/maps lines)."""
    with open("/proc/self/maps") as handle:
        return [line for line in handle if _NAME in line]


def part_rss() -> int:
    """Resident bytes of this process's maps of parts (a page mapped twice counts twice)."""
    total, inside = 0, False
    with open("/proc/self/smaps") as handle:
        for line in handle:
            if "-" in line.split(" ", 1)[0]:
                inside = _NAME in line
            elif inside and line.startswith("Rss:"):
                total += int(line.split()[1]) << 10
    return total


def part_files() -> int:
    """Bytes the parts' files hold, each file once (what is freed when its maps go)."""
    held = {}
    for line in mapped_parts():
        found = os.stat(f"/proc/self/map_files/{line.split()[0]}")
        held[found.st_ino] = found.st_blocks * 512
    return sum(held.values())
