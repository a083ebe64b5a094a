"""Pure builders of the response clusters' views: the step's cluster table, a cluster's label
in a chooser, and the diversity over the run."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from loaders import schema as S
from loaders.groups.clusters import (
    CLUSTERS_PER_100,
    LARGEST_SHARE,
    REPRESENTATIVE,
    SHARE,
    SKELETON,
    top_share,
)

SHOWN = 50  # clusters a table or a chooser lists (the rest are smaller)
ALL = "(all)"


def cluster_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The table the page shows: the SHOWN largest clusters, their skeleton last."""
    return pd.DataFrame({
        "size": table[S.GROUP_SIZE], "share": table[SHARE],
        "reward mean": table[S.stat(S.REWARD, "mean")].round(4),
        "pass rate": table[S.PASS_RATE], "length mean": table[S.stat(S.RESPONSE_LEN,
                                                                    "mean")].round(1),
        "representative": table[REPRESENTATIVE], "skeleton": table[SKELETON],
    }).head(SHOWN).reset_index(drop=True)


def summary(table: pd.DataFrame, count: int) -> str:
    """One line: how many clusters, how much of the step the largest ones hold."""
    if table.empty:
        return "No responses at this step."
    largest = int(table[S.GROUP_SIZE].iloc[0])
    repeated = int((table[S.GROUP_SIZE] > 1).sum())
    return (f"{len(table):,} clusters of {count:,} responses ({repeated:,} of more than one "
            f"response); the largest holds {largest:,} ({largest / count:.0%}), the 5 "
            f"largest {top_share(table):.0%}")


def choice_label(table: pd.DataFrame, cluster: str) -> str:
    """A cluster in the chooser: its size and share, and the start of its skeleton."""
    if cluster == ALL or cluster not in table.index:
        return "All clusters" if cluster == ALL else f"{cluster} (not at this step)"
    row = table.loc[cluster]
    text = " ".join(str(row[SKELETON]).split())[:60]
    return f"{int(row[S.GROUP_SIZE]):,} responses ({row[SHARE]:.0%}): {text}"


def diversity_figure(curve: pd.DataFrame) -> go.Figure:
    """Clusters per 100 responses and the largest cluster's share, by step: a collapse of
    the one under a rising reward is a policy answering with one template."""
    figure = go.Figure()
    figure.add_scatter(x=curve.index, y=curve[CLUSTERS_PER_100], name="clusters per 100",
                       mode="lines")
    figure.add_scatter(x=curve.index, y=100 * curve[LARGEST_SHARE], mode="lines",
                       name="largest cluster, % of the step")
    figure.add_scatter(x=curve.index, y=curve[S.stat(S.REWARD, "mean")], mode="lines",
                       name="reward mean", yaxis="y2", line={"dash": "dot"})
    figure.update_layout(height=320, margin={"t": 30, "b": 40, "l": 50, "r": 50},
                         xaxis_title="step", yaxis={"title": "%", "rangemode": "tozero"},
                         yaxis2={"title": "reward", "overlaying": "y", "side": "right"},
                         legend={"orientation": "h", "y": 1.12})
    return figure
