"""Worker parts sent through shared memory from real child processes
(loaders.index.shared_part), and what this process holds of them: their maps, the pages
resident in those maps, and the bytes their files hold."""
from __future__ import annotations

import multiprocessing
import os

import pyarrow as pa

from loaders.index import shared_part as SP

_NAME = "rl-board-part"  # shared_part's memfd name, as /proc/self/maps shows it


def _send(queue, table: pa.Table) -> None:  # noqa: ANN001 - a multiprocessing queue
    queue.put(SP.shared(table))
    queue.get()  # stay alive until the parent has read it (as a pool's worker does)


def received_from_a_child(table: pa.Table) -> pa.Table:
    """The table as a forked child sends it and this process reads it (a SharedPart)."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_send, args=(queue, table))
    child.start()
    try:
        sent = queue.get(timeout=60)
        assert isinstance(sent, SP.SharedPart) and sent.rows == table.num_rows
        return SP.received(sent)
    finally:
        queue.put(None)
        child.join(60)


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
