"""Pure builders of the Compare runs page's alerts: every run's alerts in one table, its run
names coloured, and one timeline with a row per run."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from loaders import schema as S
from pages.figures.runs import PALETTE
from pages.figures.step_panels import Panel
from pages.figures.vega import CANVAS, title


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


def alerts_timeline(table: pd.DataFrame, run_colours: dict[str, str]) -> Panel:
    """One row per run, a point per alert at its step (filled: strong; open: weak), in
    Vega-Lite (the view loads no Plotly script).  A run's label is data, drawn on the canvas
    as text: never markup, never part of an expression."""
    runs = list(dict.fromkeys(table["run"].astype(str)))
    data = pd.DataFrame({"run": table["run"].astype(str).to_numpy(),
                         S.STEP: table[S.STEP].to_numpy(dtype=np.int64),
                         "severity": table["severity"].to_numpy(),
                         "rule": table["rule"].astype(str).to_numpy()})
    encoding = {
        "x": {"field": S.STEP, "type": "quantitative", "title": S.STEP,
              "scale": {"zero": False}, "axis": {"format": "d", "tickMinStep": 1}},
        "y": {"field": "run", "type": "nominal", "title": None, "sort": runs},
        "color": {"field": "run", "type": "nominal", "legend": None, "scale": {
            "domain": runs, "range": [run_colours.get(r, PALETTE[0]) for r in runs]}},
        "tooltip": [{"field": "run", "type": "nominal"},
                    {"field": S.STEP, "type": "quantitative", "format": "d"},
                    {"field": "rule", "type": "nominal"},
                    {"field": "severity", "type": "nominal"}]}
    layers = [{"transform": [{"filter": {"field": "severity", "equal": severity}}],
               "mark": {"type": "point", "size": 110, "strokeWidth": 2, "filled": filled},
               "encoding": encoding}
              for severity, filled in (("weak", False), ("strong", True))]
    return Panel(data, {"height": {"step": 40}, "layer": layers, **CANVAS,
                        "title": title("alerts per run (filled: strong, open: weak)")})
