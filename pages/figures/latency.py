"""Pure builders of the Health page's latency panel (data -> Vega-Lite chart): a step's
request times on shared bins, and its response tokens against request time as a binned count
map, never one mark per request (8,192 requests draw as at most bins x bins cells).  Drawn
without Plotly, the panel loads no Plotly script.  Series names are the board's own column
names, data values only."""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders.health.latency import PARTS, latency_columns, time_of
from pages.figures.histogram import COUNT, binned, overlaid_bars
from pages.figures.step_panels import Panel
from pages.figures.vega import titled

HEIGHT = 320
# Plotly's colours in its order, so the request time keeps the colour it had
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728")
TOKENS_LOW, TOKENS_HIGH, TIME_LOW, TIME_HIGH = "tokens_low", "tokens_high", "time_low", \
    "time_high"


def latency_histogram(rows: pd.DataFrame, step: int, bins: int = 40) -> Panel | None:
    """The step's request times and their parts on shared bins (seconds), overlaid, a bar
    a bin with requests; None without a request time."""
    series = {"request time": time_of(rows)}
    series.update({part: rows[part].astype(float) for part in PARTS
                   if part in latency_columns(rows)})
    series = {k: v.dropna().to_numpy() for k, v in series.items() if v is not None}
    series = {k: v for k, v in series.items() if v.size}
    if not series:
        return None
    data, names = binned(series, bins)
    # overlaid as Plotly's were: each series from zero, not on the one before
    return Panel(data, {"height": HEIGHT, **overlaid_bars(
        names, list(COLOURS[:len(names)]), ("seconds", "requests"), "bottom", ".3g"),
        **titled(f"step {step}: request time and its parts")})


def tokens_time_chart(binned: tuple[np.ndarray, np.ndarray, np.ndarray], step: int
                       ) -> Panel:
    """Response tokens against request time as a binned count map (loaders' tokens_vs_time:
    counts[token bin, time bin] and both bins' edges): a cell a bin pair with requests."""
    counts, n_edges, t_edges = binned
    n_bin, t_bin = np.nonzero(counts)  # an empty cell draws nothing (Plotly's was white)
    data = pd.DataFrame({TOKENS_LOW: n_edges[n_bin], TOKENS_HIGH: n_edges[n_bin + 1],
                         TIME_LOW: t_edges[t_bin], TIME_HIGH: t_edges[t_bin + 1],
                         COUNT: counts[n_bin, t_bin].astype(np.int64)})
    return Panel(data, _map_spec(n_edges, t_edges, step))


def _map_spec(n_edges: np.ndarray, t_edges: np.ndarray, step: int) -> dict:
    edges = {"zero": False, "nice": False}  # the map spans the bins, as Plotly's did
    return {"height": HEIGHT, "mark": {"type": "rect"}, "encoding": {
        "x": {"field": TOKENS_LOW, "type": "quantitative", "title": "response tokens",
              "scale": {**edges, "domain": [float(n_edges[0]), float(n_edges[-1])]}},
        "x2": {"field": TOKENS_HIGH},
        "y": {"field": TIME_LOW, "type": "quantitative", "title": "seconds",
              "scale": {**edges, "domain": [float(t_edges[0]), float(t_edges[-1])]}},
        "y2": {"field": TIME_HIGH},
        "color": {"field": COUNT, "type": "quantitative", "title": "requests",
                  "scale": {"scheme": "blues"}},
        "tooltip": [{"field": TOKENS_LOW, "type": "quantitative", "format": ".0f",
                     "title": "tokens from"},
                    {"field": TOKENS_HIGH, "type": "quantitative", "format": ".0f",
                     "title": "tokens to"},
                    {"field": TIME_LOW, "type": "quantitative", "format": ".3g",
                     "title": "seconds from"},
                    {"field": TIME_HIGH, "type": "quantitative", "format": ".3g",
                     "title": "seconds to"},
                    {"field": COUNT, "type": "quantitative", "title": "requests"}]},
        **titled(f"step {step}: response tokens vs request time")}

