"""Several series counted on shared bins, as overlaid Vega-Lite bars (each from zero, so
two series' bars line up bin for bin): what the reward, reward-component and request-time
histograms share.  A bar is a bin with values; names are data values drawn as text."""
from __future__ import annotations

import numpy as np
import pandas as pd

COLUMN, SERIES, LOW, HIGH, COUNT = "column", "series", "low", "high", "count"
OPACITY = 0.55


def binned(series: dict[str, np.ndarray], bins: int) -> tuple[pd.DataFrame, list[str]]:
    """Rows (COLUMN, SERIES, LOW, HIGH, COUNT) of every series' non-empty bins on edges
    shared by all, and the series' legend names ("reward (8192)"); series of finite values,
    at least one of them not empty."""
    edges = np.histogram_bin_edges(np.concatenate(list(series.values())), bins=bins)
    frames, names = [], []
    for column, values in series.items():
        counts, _ = np.histogram(values, bins=edges)
        names.append(f"{column} ({values.size})")
        frames.append(pd.DataFrame({COLUMN: column, SERIES: names[-1], LOW: edges[:-1],
                                    HIGH: edges[1:], COUNT: counts})[counts > 0])
    # the tallest bars first, so a shorter one of the same bin is drawn over it (and takes
    # the click there): else a reward bar under a taller ref_reward bar could not be clicked
    rows = pd.concat(frames, ignore_index=True)
    return rows.sort_values(COUNT, ascending=False, kind="stable", ignore_index=True), names


def overlaid_bars(names: list[str], colours: list[str], titles: tuple[str, str],
                  legend: str = "top", fmt: str = ".4g") -> dict:
    """The mark and encoding of binned()'s rows: x the bin, y its count from zero, a colour
    a series; `titles` are the x axis's and the count's."""
    x_title, count_title = titles
    return {"mark": {"type": "bar", "opacity": OPACITY}, "encoding": {
        "x": {"field": LOW, "type": "quantitative", "title": x_title, "scale": {"zero": False}},
        "x2": {"field": HIGH},
        "y": {"field": COUNT, "type": "quantitative", "title": count_title, "stack": None},
        "y2": {"datum": 0},  # with x2 and no y2, a bar would lie across at its count
        "color": {"field": SERIES, "type": "nominal", "title": None,
                  "scale": {"domain": names, "range": colours},
                  "legend": {"orient": legend, "direction": "horizontal"}},
        "tooltip": [{"field": SERIES, "type": "nominal", "title": "of"},
                    {"field": LOW, "type": "quantitative", "format": fmt},
                    {"field": HIGH, "type": "quantitative", "format": fmt},
                    {"field": COUNT, "type": "quantitative", "title": count_title}]}}
