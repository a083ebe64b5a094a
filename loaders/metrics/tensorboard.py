"""TensorBoard event files, read only when the optional `tensorboard` package is installed."""
from __future__ import annotations

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
    accumulator = EventAccumulator(str(path), size_guidance={"scalars": 0})
    accumulator.Reload()
    points = []
    for tag in accumulator.Tags().get("scalars", []):
        for event in accumulator.Scalars(tag):
            points.append((int(event.step), float(event.wall_time), {tag: float(event.value)}))
    return points
