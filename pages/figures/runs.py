"""Pure builders of the Compare runs page: colours and labels of runs, and the table of B − A
on common steps (the overlaid curves and the B − A chart: runs_curves.py; the alerts:
runs_alerts.py).

Every curve is one point per step and run (from runset.curve_stats or a metric frame), so
four runs of any size draw as a few hundred points each.
"""
from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

import pandas as pd

from loaders import schema as S
from loaders.metrics.collect import TIME

# Okabe-Ito and Tableau hues that stay apart on white, in print and for most colour vision
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#7f7f7f",
           "#8c564b", "#bcbd22", "#17becf")
# each hue's family: two runs of one family (vermilion beside brown, blue beside sky blue)
# read as one run at a glance, so a family is used twice only once every one is used
FAMILY = ("blue", "warm", "green", "pink", "warm", "blue", "grey", "warm", "green", "blue")
STEP_AXIS, TIME_AXIS = "step", "time"
MAX_LABEL = 24  # characters of a default label (a run's dir name)


@dataclass(frozen=True)
class Series:
    """One run's curve data: its label, colour and a frame indexed by step."""
    label: str
    colour: str
    frame: pd.DataFrame


def colours(names: Sequence[str]) -> list[str]:
    """A colour per run that depends on the run's name, not its position: adding or removing
    another run keeps the others' colours, unless two names want one colour, or one family
    of hues (FAMILY) while another is still free: the later run then takes the next hue."""
    taken: set[int] = set()
    out = []
    for name in names:
        start = zlib.crc32(name.encode("utf-8", "surrogatepass")) % len(PALETTE)
        order = [(start + step) % len(PALETTE) for step in range(len(PALETTE))]
        families = {FAMILY[slot] for slot in taken}
        free = [slot for slot in order if slot not in taken] or order
        slot = next((s for s in free if FAMILY[s] not in families), free[0])
        taken.add(slot)
        out.append(PALETTE[slot])
    return out


def labels(names: Sequence[str], typed: str = "") -> list[str]:
    """Short labels: the comma-separated `typed` ones in run order, else each run's last
    dir name; made unique with #2, #3…"""
    given = [t.strip() for t in typed.split(",")] if typed.strip() else []
    out: list[str] = []
    for i, name in enumerate(names):
        label = given[i] if i < len(given) and given[i] else PurePath(name).name or name
        label = label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "…"
        base, n = label, 2
        while label in out:
            label, n = f"{base} #{n}", n + 1
        out.append(label)
    return out


def difference_table(diffs: Sequence[Series], baseline: str) -> pd.DataFrame:
    """One table of the difference's numbers by step: A, each B and each B − A (blank where
    a run lacks the step)."""
    parts = {}
    for one in diffs:
        parts.setdefault(baseline, one.frame["a"])
        parts[one.label] = one.frame["b"]
        parts[f"{one.label} − {baseline}"] = one.frame[S.DELTA]
    if not parts:
        return pd.DataFrame(index=pd.Index([], name=S.STEP))
    table = pd.concat(parts, axis=1, sort=True)
    table.index.name = S.STEP
    return table


def metric_times(frame: pd.DataFrame) -> pd.Series | None:
    """A metric frame's wall time by step, when its source logged one."""
    return frame[TIME] if TIME in frame and frame[TIME].notna().any() else None
