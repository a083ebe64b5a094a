"""Pure builders of the Compare runs page's alerts: every run's alerts in one table, its run
names coloured, and one timeline with a row per run."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from pandas.io.formats.style import Styler

from loaders import schema as S
from pages.figures.axes import integer_steps
from pages.figures.runs import PALETTE
from pages.figures.text import plot_text


def alerts_frame(per_run: Sequence[tuple[str, list]]) -> pd.DataFrame:
    """Every run's alerts as one table: run, step, severity, rule, evidence."""
    rows = [{"run": label, S.STEP: a.step, "severity": a.severity, "rule": a.rule,
             "evidence": ", ".join(f"{k}={v}" for k, v in a.evidence.items())}
            for label, alerts in per_run for a in alerts]
    columns = ["run", S.STEP, "severity", "rule", "evidence"]
    return pd.DataFrame(rows, columns=columns).sort_values([S.STEP, "run"], kind="stable")


def coloured_by_run(table: pd.DataFrame, run_colours: dict[str, str]) -> Styler:
    """The table with each row's run name in that run's colour."""
    return table.style.map(lambda run: f"color: {run_colours.get(run, '')}; font-weight: 600",
                           subset=["run"])


def alerts_timeline(table: pd.DataFrame, run_colours: dict[str, str]) -> go.Figure:
    """One row per run, a marker per alert at its step (filled: strong; open: weak)."""
    fig = go.Figure()
    for label, rows in table.groupby("run", sort=False):
        strong = rows["severity"] == "strong"
        fig.add_trace(go.Scatter(
            x=rows[S.STEP], y=[plot_text(str(label))] * len(rows), mode="markers",
            marker={"color": run_colours.get(label, PALETTE[0]), "size": 11,
                    "symbol": np.where(strong, "circle", "circle-open")},
            text=rows["rule"].map(plot_text), hovertemplate="step %{x}: %{text}<extra></extra>"))
    fig.update_layout(title="alerts per run (filled: strong, open: weak)", xaxis_title=S.STEP,
                      height=120 + 40 * table["run"].nunique(), showlegend=False,
                      margin={"l": 10, "r": 10, "t": 40, "b": 10})
    integer_steps(fig, table[S.STEP])
    return fig
