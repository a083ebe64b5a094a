"""A step's responses in near-duplicate clusters, from the signatures the index holds.

Two responses whose signatures share a band (loaders.index.signatures: word 3-grams, numbers
read as one "0") are linked; a cluster is what the links join.  Deterministic, offline, from
the index alone: a step of 8,192 responses is a few sorts of 8,192 numbers.  Each cluster's
size, share of the step, mean reward, pass rate and mean length; its representative (the
member whose length is the cluster's median) and the representative's skeleton (every run
of digits as "#": what the paraphrases share).  Across steps, the diversity: clusters per
100 responses and the largest cluster's share (a collapse of it under a rising reward is
what a policy that found one template looks like).
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from loaders import schema as S

CLUSTER = "cluster"  # a cluster's id: its first member's row in the step
SHARE = "share"
REPRESENTATIVE = "representative"  # its row's key
SKELETON = "skeleton"
CLUSTERS_PER_100 = "clusters_per_100"
LARGEST_SHARE = "largest_share"
TOP = 5  # the clusters whose summed share the step's summary names
_DIGITS = re.compile(r"[0-9]+")


def cluster_labels(signatures: np.ndarray) -> np.ndarray:
    """Each response's cluster: the lowest position among the responses it is linked to,
    through any chain of shared bands (signatures: (n, 4) int64, schema.SIGNATURES)."""
    n = len(signatures)
    labels = np.arange(n)
    if n < 2:
        return labels
    bands = np.ascontiguousarray(signatures, dtype=np.int64).view(np.uint32).reshape(n, -1)
    groups = []
    for band in bands.T:  # the runs of equal values of each band, sorted once
        order = np.argsort(band, kind="stable")
        starts = np.flatnonzero(np.r_[True, band[order][1:] != band[order][:-1]])
        if len(starts) < n:
            groups.append((order, starts, np.diff(np.r_[starts, n])))
    while groups:  # the lowest label flows along the links until nothing moves
        before = labels.copy()
        for order, starts, sizes in groups:
            labels[order] = np.repeat(np.minimum.reduceat(labels[order], starts), sizes)
        labels = labels[labels]
        if np.array_equal(before, labels):
            break
    return labels


def cluster_table(rows: pd.DataFrame, labels: np.ndarray, passes: pd.Series,
                  previews: pd.Series) -> pd.DataFrame:
    """One row per cluster of a step's responses, largest first: size, share, mean reward,
    pass rate, mean length, representative (key and preview) and skeleton.  `rows`: the
    step's samples with KEY, REWARD, RESPONSE_LEN; `previews`: their response previews."""
    work = pd.DataFrame({CLUSTER: labels, S.REWARD: rows[S.REWARD].to_numpy(),
                         S.RESPONSE_LEN: rows[S.RESPONSE_LEN].to_numpy(np.float64),
                         "pass": passes.to_numpy(np.float64), "at": np.arange(len(rows))})
    by = work.groupby(CLUSTER, sort=False)
    table = pd.DataFrame({
        S.GROUP_SIZE: by.size(), S.stat(S.REWARD, "mean"): by[S.REWARD].mean(),
        S.PASS_RATE: by["pass"].mean(), S.stat(S.RESPONSE_LEN, "mean"): by[
            S.RESPONSE_LEN].mean()})
    table[SHARE] = table[S.GROUP_SIZE] / max(len(rows), 1)
    middle = work.assign(gap=(work[S.RESPONSE_LEN] - by[S.RESPONSE_LEN].transform(
        "median")).abs()).sort_values(["gap", "at"]).groupby(CLUSTER).first()["at"]
    at = middle.reindex(table.index).to_numpy()
    table[REPRESENTATIVE] = rows[S.KEY].to_numpy()[at]
    table[S.RESPONSE] = previews.to_numpy()[at]
    table[SKELETON] = [_DIGITS.sub("#", str(text)) for text in table[S.RESPONSE]]
    table = table.sort_values([S.GROUP_SIZE], ascending=False, kind="stable")
    table.index.name = CLUSTER
    return table


def diversity(labels: np.ndarray) -> dict[str, float]:
    """A step's diversity: its clusters per 100 responses, and the largest one's share."""
    if not len(labels):
        return {CLUSTERS_PER_100: np.nan, LARGEST_SHARE: np.nan}
    counts = np.bincount(np.unique(labels, return_inverse=True)[1])
    return {CLUSTERS_PER_100: 100.0 * len(counts) / len(labels),
            LARGEST_SHARE: counts.max() / len(labels)}


def diversity_by_step(steps: np.ndarray, signatures: np.ndarray) -> pd.DataFrame:
    """diversity() of each step's rows (steps: each row's step; signatures: (n, 4) int64),
    indexed by step: one sort of the steps, then numpy over each step's slice."""
    if not len(steps):
        return pd.DataFrame(columns=[CLUSTERS_PER_100, LARGEST_SHARE],
                            dtype=np.float64).rename_axis(S.STEP)
    order = np.argsort(steps, kind="stable")
    ordered = steps[order]
    bounds = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1], True])
    found = {int(ordered[first]): diversity(cluster_labels(signatures[order[first:end]]))
             for first, end in zip(bounds[:-1], bounds[1:])}
    return pd.DataFrame.from_dict(found, orient="index",
                                  columns=[CLUSTERS_PER_100, LARGEST_SHARE]).rename_axis(S.STEP)


def top_share(table: pd.DataFrame, top: int = TOP) -> float:
    """The share of the step in its `top` largest clusters."""
    return float(table[SHARE].head(top).sum()) if len(table) else 0.0
