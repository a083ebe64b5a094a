"""Pure builders of the response clusters' views: the step's cluster table, a cluster's label
in a chooser, and the diversity over the run."""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.groups.clusters import (
    CLUSTERS_PER_100,
    LARGEST_SHARE,
    REPRESENTATIVE,
    SHARE,
    SKELETON,
    top_share,
)
from pages.figures.curve_points import MARKERS_UP_TO, kept_points
from pages.figures.step_panels import DASHES, SERIES, STEP, VALUE, Panel
from pages.figures.vega import CANVAS, title

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


def diversity_chart(curve: pd.DataFrame) -> Panel | None:
    """Clusters per 100 responses and the largest cluster's share (%, left axis), and the
    reward mean (dotted, right axis), by step: a collapse of the one under a rising reward
    is a policy answering with one template.  None without a step."""
    if curve.empty:
        return None
    steps = curve.index.to_numpy(np.float64)
    columns = [curve[CLUSTERS_PER_100].to_numpy(np.float64),
               100 * curve[LARGEST_SHARE].to_numpy(np.float64),
               curve[S.stat(S.REWARD, "mean")].to_numpy(np.float64)]
    kept = kept_points(columns)  # a long run: each bin's extremes of every curve
    data = pd.concat([pd.DataFrame({STEP: steps[kept], SERIES: name, VALUE: values[kept]})
                      for name, values in zip(DIVERSITY, columns)], ignore_index=True)
    # a short run's steps as dots too (a lone step has no line)
    return Panel(data, _diversity_spec(len(steps) <= MARKERS_UP_TO))


def _diversity_spec(points: bool) -> dict:
    x = {"field": STEP, "type": "quantitative", "title": STEP, "axis": {"format": "d"}}
    legend = {"orient": "top", "title": None, "labelLimit": 320, "symbolType": "stroke"}
    keys = {"color": {"field": SERIES, "type": "nominal", "legend": legend,
                      "scale": {"domain": list(DIVERSITY), "range": list(_COLOURS)}},
            "strokeDash": {"field": SERIES, "type": "nominal", "legend": None,
                           "scale": {"domain": list(DIVERSITY), "range": _DASHES}},
            "tooltip": [{"field": STEP, "type": "quantitative"},
                        {"field": SERIES, "type": "nominal"},
                        {"field": VALUE, "type": "quantitative", "format": ".4g"}]}

    def layer(names: list[str], y_axis: dict, zero: bool) -> dict:
        return {"transform": [{"filter": {"field": SERIES, "oneOf": names}}],
                "mark": {"type": "line", "point": points},
                "encoding": {"x": x, "y": {"field": VALUE, "type": "quantitative",
                                           "axis": y_axis, "scale": {"zero": zero}}, **keys}}

    # two y axes, as Plotly's yaxis2: the shares in % on the left, the reward on the right
    return {"height": 320, "layer": [layer(list(DIVERSITY[:2]), {"title": "%"}, True),
                                     layer([DIVERSITY[2]], {"title": "reward",
                                                            "orient": "right"}, False)],
            "resolve": {"scale": {"y": "independent"}},
            "title": title("diversity over the run (reward mean dotted, right axis)"),
            **CANVAS}


DIVERSITY = ("clusters per 100", "largest cluster, % of the step", "reward mean")
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c")  # Plotly's first three, as the curves had
_DASHES = [DASHES["solid"], DASHES["solid"], DASHES["dot"]]
