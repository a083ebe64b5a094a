"""A served run's response clusters: a step's (its rows' signatures), and the diversity of
every step over the run (made once, kept beside the index)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.groups.clusters import cluster_labels, cluster_table, diversity_by_step
from loaders.groups.table import DEFAULT_PASS, passed
from loaders.serve.run import Run

DIVERSITY = "diversity"  # the kept table's name


def step_clusters(rows: pd.DataFrame, threshold: float = DEFAULT_PASS
                  ) -> tuple[pd.Series, pd.DataFrame]:
    """(each row's cluster, named by its first member's key; the clusters' table, indexed
    by that name, largest first) of a step's rows (with their SIGNATURES, KEY, REWARD,
    RESPONSE_LEN and response previews)."""
    keys = rows[S.KEY].to_numpy()
    labels = cluster_labels(rows[list(S.SIGNATURES)].to_numpy(np.int64))
    table = cluster_table(rows, labels, passed(rows, threshold)[0], rows[S.RESPONSE])
    table.index = pd.Index(keys[table.index.to_numpy()], name=table.index.name)
    return pd.Series(keys[labels], index=rows.index, name=table.index.name), table


def diversity_curve(run: Run) -> pd.DataFrame:
    """Per step: clusters per 100 responses, the largest cluster's share and the mean
    reward (the trained samples' own signatures, read once for the run)."""
    def make() -> pd.DataFrame:
        rows = run.columns([S.STEP, S.REWARD, *S.SIGNATURES])
        curve = diversity_by_step(rows[S.STEP].to_numpy(), rows[list(S.SIGNATURES)].to_numpy(
            np.int64))
        curve[S.stat(S.REWARD, "mean")] = rows.groupby(S.STEP)[S.REWARD].mean()
        return curve
    return run.derived_table(DIVERSITY, make)
