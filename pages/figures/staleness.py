"""Pure builders of the Health page's policy-lag panel (data -> Vega-Lite charts): the
panel opened loads no Plotly script.  Lag bins are the board's own labels ("0", "1",
"2+"), metric names the board's columns."""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders.health.staleness import FACTS, MIXED
from pages.figures.step_panels import STEP, Curve, Panel, panel
from pages.figures.vega import CANVAS, title

LAG_COLOURS = ("#2ca02c", "#1f77b4", "#ff7f0e", "#d62728", "#9467bd", "#8c564b", "#7f7f7f")


def lag_panels(table: pd.DataFrame, step: int | None = None) -> list[Panel]:
    """Per step: the share of samples at each policy lag (stacked), the lag's mean and max,
    and the share of samples whose generation spanned several policy versions; the chosen
    step a dotted rule on the curves."""
    steps = table.index.to_numpy(np.float64)
    lags = panel(steps, [Curve(name, table[name].to_numpy(np.float64), colour) for name, colour
                         in (("lag mean", "#1f77b4"), ("lag max", "#d62728"))],
                 title="policy lag (updates behind the trained step)", y_title="updates",
                 step=step, height=220)
    mixed = panel(steps, [Curve(MIXED, table[MIXED].to_numpy(np.float64), "#9467bd")],
                  title=MIXED, y_title="share", step=step, height=180, legend=False)
    return [_shares(table), lags, mixed]


def _shares(table: pd.DataFrame) -> Panel:
    """The share of each lag bin a step, stacked in pandas (a bin on the ones before it)."""
    bins = [str(c) for c in table.columns if c not in FACTS]
    shares = table[[c for c in table.columns if c not in FACTS]].fillna(0.0).to_numpy(float)
    tops = np.cumsum(shares, axis=1)
    steps = table.index.to_numpy(np.float64)
    data = pd.DataFrame({STEP: np.repeat(steps, len(bins)), "lag": np.tile(bins, len(steps)),
                         "share": shares.ravel(), "top": tops.ravel(),
                         "bottom": (tops - shares).ravel()})
    data = data[data["share"] > 0]
    data["from"], data["to"] = data[STEP] - 0.45, data[STEP] + 0.45
    colour = {"field": "lag", "type": "nominal", "title": "policy lag", "scale": {
        "domain": bins, "range": [LAG_COLOURS[i % len(LAG_COLOURS)] for i in range(len(bins))]},
              "legend": {"orient": "right"}}
    spec = {"height": 260, "mark": {"type": "rect"}, **CANVAS,
            "title": title("policy lag (async RL): share of samples by lag"),
            "encoding": {
                "x": {"field": "from", "type": "quantitative", "title": STEP,
                      "scale": {"zero": False, "nice": False},
                      "axis": {"format": "d", "tickMinStep": 1}},
                "x2": {"field": "to"},
                "y": {"field": "bottom", "type": "quantitative", "title": "share of samples",
                      "axis": {"format": ".0%"}, "scale": {"domain": [0, 1]}},
                "y2": {"field": "top"}, "color": colour,
                "tooltip": [{"field": STEP, "type": "quantitative", "format": "d"},
                            {"field": "lag", "type": "nominal"},
                            {"field": "share", "type": "quantitative", "format": ".1%"}]}}
    return Panel(data.reset_index(drop=True), spec)


def by_lag_chart(table: pd.DataFrame, metric: str, step: int) -> Panel:
    """One step's samples by lag: how many (bars, left axis), and a metric's mean (a line,
    right axis)."""
    data = pd.DataFrame({"lag": [str(x) for x in table.index],
                         "samples": table["samples"].to_numpy(np.int64),
                         "mean": table[metric].to_numpy(np.float64) if metric in table
                         else np.full(len(table), np.nan)})
    x = {"field": "lag", "type": "nominal", "title": "policy lag", "sort": None,
         "axis": {"labelAngle": 0}}
    bars = {"mark": {"type": "bar", "opacity": 0.5, "color": "#1f77b4"},
            "encoding": {"x": x, "y": {"field": "samples", "type": "quantitative",
                                       "title": "samples"},
                         "tooltip": [{"field": "lag", "type": "nominal"},
                                     {"field": "samples", "type": "quantitative"}]}}
    line = {"mark": {"type": "line", "point": True, "color": "#d62728"},
            "encoding": {"x": x, "y": {"field": "mean", "type": "quantitative",
                                       "title": f"{metric} (mean)", "axis": {"orient": "right"}},
                         "tooltip": [{"field": "lag", "type": "nominal"},
                                     {"field": "mean", "type": "quantitative", "format": ".4g",
                                      "title": f"{metric} (mean)"}]}}
    return Panel(data, {"height": 320, "layer": [bars, line], **CANVAS,
                        "resolve": {"scale": {"y": "independent"}},
                        "title": title(f"step {step}: samples and {metric} by policy lag")})
