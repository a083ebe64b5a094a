"""TensorBoard event files, read only when the optional `tensorboard` package is installed."""
from __future__ import annotations

import os
import stat
from pathlib import Path

MISSING = ("TensorBoard event files were found but the optional 'tensorboard' package is not "
           "installed (pip install tensorboard); their scalars are not shown")


def read_events(path: Path, notes: list[str]) -> list[tuple[int, float | None, dict[str, float]]]:
    """(step, wall time, {tag: value}) per scalar event; a note instead when unavailable."""
    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    except ImportError:
        if MISSING not in notes:
            notes.append(MISSING)
        return []
    if (why := _unreadable(path)) is not None:
        notes.append(f"{path}: not read ({why})")
        return []
    try:
        accumulator = EventAccumulator(str(path), size_guidance={"scalars": 0})
        accumulator.Reload()
    except Exception as err:  # noqa: BLE001  (a torn or corrupt file is a note, not a crash)
        first = next(iter(str(err).splitlines()), "")
        notes.append(f"{path}: not read ({type(err).__name__}: {first})")
        return []
    points = []
    for tag in accumulator.Tags().get("scalars", []):
        for event in accumulator.Scalars(tag):
            points.append((int(event.step), float(event.wall_time), {tag: float(event.value)}))
    return points


def _unreadable(path: Path) -> str | None:
    """Why the file must not be opened: tensorboard opens it itself, blocking on a FIFO."""
    try:
        mode = os.stat(path).st_mode
    except OSError as err:
        return err.strerror or str(err)
    return None if stat.S_ISREG(mode) else "not a regular file"
