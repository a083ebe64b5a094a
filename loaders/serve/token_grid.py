"""The Tokens page's grids of every metric as one table of numbers, kept beside the index
(Run.token_grids): a first view of a long run reads 32 numbers a step and a metric, instead of
decoding the token digests of every file and step (0.4 s on 1,000 steps × 8 files).

The table is long (a row per step and bin, at least one bin); each metric has five columns:
`mean:M` and `tokens:M` (the grid), `start:M` (the bin's first position), `has:M` (1 on the
rows of a step the metric's own grid has) and `width:M` (its grid's bins), so `grid_of` gives
back exactly what token_summary.position_grid gives, whatever steps and widths the metrics
differ in.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders.serve.token_summary import (
    RELATIVE,
    Digest,
    PositionGrid,
    position_grid,
    summary_metrics,
)

STEP, BIN = "step", "bin"
NAME = "token_grid_v2_{scale}"  # a kept table's name: a new layout, a new name
_PARTS = ("mean", "tokens", "start", "has", "width")


def grid_table(found: list[Digest], scale: str) -> pd.DataFrame:
    """Every metric's position grid at this scale, in the digests' metric order."""
    grids = {m: position_grid(found, m, scale) for m in summary_metrics(found)}
    steps = sorted({s for g in grids.values() for s in g.steps})
    width = max((g.means.shape[1] for g in grids.values()), default=0)
    bins = max(1, width)  # a row a step, also where no metric has a bin
    row_of = {step: i for i, step in enumerate(steps)}
    table: dict[str, np.ndarray] = {
        STEP: np.repeat(np.array(steps, dtype=np.int64), bins),
        BIN: np.tile(np.arange(bins, dtype=np.int64), len(steps))}
    for metric, grid in grids.items():
        parts = {p: np.zeros((len(steps), bins)) for p in _PARTS}
        parts["mean"][:] = np.nan
        rows, cols = [row_of[s] for s in grid.steps], slice(0, grid.means.shape[1])
        parts["mean"][rows, cols], parts["tokens"][rows, cols] = grid.means, grid.tokens
        parts["start"][:, cols], parts["has"][rows, :] = grid.starts, 1.0
        parts["width"][:] = grid.means.shape[1]
        table.update({f"{p}:{metric}": parts[p].ravel() for p in _PARTS})
    return pd.DataFrame(table)


def grid_metrics(table: pd.DataFrame) -> list[str]:
    """The metrics a grid table holds, in the order it holds them."""
    return [c.split(":", 1)[1] for c in table.columns if c.startswith("has:")]


def grid_of(table: pd.DataFrame, metric: str, scale: str = RELATIVE) -> PositionGrid:
    """One metric's grid at the table's scale, as token_summary.position_grid made it."""
    has = table[f"has:{metric}"].to_numpy() > 0 if f"has:{metric}" in table else None
    if has is None or not has.any():
        return PositionGrid([], [], np.zeros((0, 0)), np.zeros((0, 0)))
    steps = np.unique(table[STEP].to_numpy()[has])
    width = int(table[f"width:{metric}"].to_numpy()[0])
    bins = int(table[BIN].to_numpy().max()) + 1

    def part(name: str) -> np.ndarray:
        return table[f"{name}:{metric}"].to_numpy()[has].reshape(len(steps), bins)[:, :width]

    starts = part("start")[0].tolist()
    return PositionGrid(steps.tolist(), starts if scale == RELATIVE else list(map(int, starts)),
                        part("mean"), part("tokens"))
