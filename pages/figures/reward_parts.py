"""Pure builders of the Rewards page's reward-components views (data -> Vega-Lite chart):
the components over the run and one component's histogram at a step (a click on a bar is
read by rewards.picked_bin).  Component names come from the dump: data values and titles
drawn on the canvas as text, never markup, never part of an expression."""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S
from pages.figures.curve_points import MARKERS_UP_TO, kept_points
from pages.figures.histogram import SERIES, binned
from pages.figures.rewards import histogram_spec
from pages.figures.smoothing import column_values
from pages.figures.step_panels import STEP, VALUE, Panel
from pages.figures.vega import CANVAS, title


def components_chart(table: pd.DataFrame, names: list[str], add_up: bool) -> Panel:
    """Each component's mean per step, stacked areas when they add up to the reward (its
    make-up), else one line each; the reward's mean a dotted black line over them.  A
    long run keeps each bin's extremes of every curve, on steps they share (a stack needs
    them)."""
    steps = table.index.to_numpy(dtype=np.float64)
    columns = [*names, S.REWARD]
    kept = kept_points([column_values(table, c) for c in columns])
    labels = [*names, REWARD_MEAN]
    data = pd.concat([pd.DataFrame({STEP: steps[kept], SERIES: label,
                                    VALUE: column_values(table, c)[kept]})
                      for c, label in zip(columns, labels)], ignore_index=True)
    return Panel(data, _components_spec(labels, add_up, len(kept) <= MARKERS_UP_TO))


def _components_spec(labels: list[str], add_up: bool, points: bool) -> dict:
    """labels: the components', then the reward mean's; points: a dot a step."""
    names = labels[:-1]
    colour = {"field": SERIES, "type": "nominal", "title": None, "legend": {"orient": "bottom"},
              "scale": {"domain": labels, "range": [*PALETTE[:len(names)], "#000"]}}
    x = {"field": STEP, "type": "quantitative", "title": STEP, "scale": {"zero": False},
         "axis": {"format": "d", "tickMinStep": 1}}
    tooltip = [{"field": STEP, "type": "quantitative", "format": "d"},
               {"field": SERIES, "type": "nominal", "title": "of"},
               {"field": VALUE, "type": "quantitative", "format": ".4g"}]

    def layer(shown: list[str], mark: dict, stack: str | None) -> dict:
        return {"transform": [{"filter": {"field": SERIES, "oneOf": shown}}], "mark": mark,
                "encoding": {"x": x, "color": colour, "tooltip": tooltip, "y": {
                    "field": VALUE, "type": "quantitative", "title": "mean", "stack": stack}}}

    parts = layer(names, {"type": "area", "opacity": 0.7, "line": True} if add_up
                  else {"type": "line", "point": points}, "zero" if add_up else None)
    reward = layer([REWARD_MEAN], {"type": "line", "strokeDash": [2, 3], "point": points},
                   None)
    how = "stacked: they add up to the reward" if add_up else "they do not add up to the reward"
    return {"height": 360, "layer": [parts, reward], **CANVAS,
            "title": title(f"reward components, mean per step ({how})")}


def component_histogram(rows: pd.DataFrame, name: str, bins: int = 30) -> Panel | None:
    """One component's counts at a step, a bar a bin with samples (a click picks its bounds:
    the Responses table filtered to them); None without a finite value."""
    values = column_values(rows, name)
    values = values[np.isfinite(values)]
    if not values.size:
        return None
    data, names = binned({name: values}, bins)
    heading = f"{name} ({values.size} samples; click a bar for its samples)"
    return Panel(data, histogram_spec(names, heading, x_title=name))


REWARD_MEAN = "reward (mean)"
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
