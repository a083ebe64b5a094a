"""The Tokens page's grids of every metric as one table of numbers, kept beside the index
(Run.token_grids): a first view of a long run reads 32 numbers a step and a metric, instead of
decoding the token digests of every file and step (0.4 s on 1,000 steps × 8 files).

The table is long (a row per step and bin); each metric has four columns:
`mean:M` and `tokens:M` (the grid), `start:M` (the bin's first position) and `has:M` (1 where
the metric's own grid has this step and bin), so `grid_of` gives back exactly what
token_summary.position_grid gives, whatever steps and widths the metrics differ in.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders.serve.token_summary import Digest, PositionGrid, position_grid, summary_metrics

STEP, BIN = "step", "bin"
_PARTS = ("mean", "tokens", "start", "has")


def grid_table(found: list[Digest], scale: str) -> pd.DataFrame:
    """Every metric's position grid at this scale, in the digests' metric order."""
    grids = {m: position_grid(found, m, scale) for m in summary_metrics(found)}
    steps = sorted({s for g in grids.values() for s in g.steps})
    width = max((g.means.shape[1] for g in grids.values()), default=0)
    row_of = {step: i for i, step in enumerate(steps)}
    table: dict[str, np.ndarray] = {
        STEP: np.repeat(np.array(steps, dtype=np.int64), width),
        BIN: np.tile(np.arange(width, dtype=np.int64), len(steps))}
    for metric, grid in grids.items():
        parts = {p: np.zeros((len(steps), width)) for p in _PARTS}
        parts["mean"][:] = np.nan
        rows, cols = [row_of[s] for s in grid.steps], slice(0, grid.means.shape[1])
        parts["mean"][rows, cols], parts["tokens"][rows, cols] = grid.means, grid.tokens
        parts["start"][:, cols], parts["has"][rows, cols] = grid.starts, 1.0
        table.update({f"{p}:{metric}": parts[p].ravel() for p in _PARTS})
    return pd.DataFrame(table)


def grid_metrics(table: pd.DataFrame) -> list[str]:
    """The metrics a grid table holds, in the order it holds them."""
    return [c.split(":", 1)[1] for c in table.columns if c.startswith("has:")]


def grid_of(table: pd.DataFrame, metric: str) -> PositionGrid:
    """One metric's grid, as token_summary.position_grid made it."""
    has = table[f"has:{metric}"].to_numpy() > 0 if f"has:{metric}" in table else None
    if has is None or not has.any():
        return PositionGrid([], [], np.zeros((0, 0)), np.zeros((0, 0)))
    steps = np.unique(table[STEP].to_numpy()[has])
    width = int(table[BIN].to_numpy()[has].max()) + 1
    full = table[BIN].to_numpy().max() + 1
    keep = np.isin(table[STEP].to_numpy(), steps)

    def part(name: str) -> np.ndarray:
        return table[f"{name}:{metric}"].to_numpy()[keep].reshape(len(steps), full)[:, :width]

    starts = part("start")[0].tolist()
    return PositionGrid(steps.tolist(), starts, part("mean"), part("tokens"))
