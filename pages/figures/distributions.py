"""Pure builders of one step's reward distributions that stay readable at 8,192 samples:
quantile curves and bins, never one mark per sample; Vega-Lite charts (a tab opened loads no
Plotly script)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S
from pages.figures import rewards as R
from pages.figures.groups import KIND_COLORS
from pages.figures.histogram import COUNT, HIGH, LOW, SERIES
from pages.figures.smoothing import column_values
from pages.figures.step_panels import VALUE, Panel
from pages.figures.vega import titled

POINTS = 256  # quantiles drawn per curve, whatever the number of samples


def _finite(rows: pd.DataFrame, column: str) -> np.ndarray:
    values = column_values(rows, column)
    return np.sort(values[np.isfinite(values)])


def quantile_curve(values: np.ndarray, points: int = POINTS) -> tuple[np.ndarray, np.ndarray]:
    """(share, value) at most `points` evenly spaced quantiles of sorted values, always
    with the minimum and the maximum, so a lone extreme sample stays on the curve."""
    if values.size <= points:
        return (np.arange(1, values.size + 1) / max(values.size, 1)), values
    share = np.linspace(0.0, 1.0, points)
    return share, np.quantile(values, share)


def reward_ecdf(rows: pd.DataFrame) -> Panel:
    """Cumulative share of samples at or below each reward, RL against the reference (a
    missing reference left out), as Vega-Lite steps."""
    frames, names, colours = [], [], []
    for column, colour in ((S.REWARD, R.RL_COLOR), (S.REF_REWARD, R.REF_COLOR)):
        values = _finite(rows, column)
        if values.size:
            share, x = quantile_curve(values)
            names.append(f"{column} ({values.size})")
            colours.append(colour)
            frames.append(pd.DataFrame({SERIES: names[-1], VALUE: x, SHARE: share}))
    data = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        {SERIES: [], VALUE: [], SHARE: []})
    spec = {"height": HEIGHT, "mark": {"type": "line", "interpolate": "step-after"},
            "encoding": {
                "x": {"field": VALUE, "type": "quantitative", "title": S.REWARD,
                      "scale": {"zero": False}},
                "y": {"field": SHARE, "type": "quantitative", "title": "share of samples",
                      "scale": {"domain": [0, 1]}, "axis": {"format": ".0%"}},
                "color": {"field": SERIES, "type": "nominal", "title": None,
                          "scale": {"domain": names, "range": colours},
                          "legend": {"orient": "bottom"}},
                "tooltip": [{"field": SERIES, "type": "nominal", "title": "of"},
                            {"field": VALUE, "type": "quantitative", "format": ".4g",
                             "title": "reward at most"},
                            {"field": SHARE, "type": "quantitative", "format": ".0%",
                             "title": "share of samples"}]},
            **titled(f"ECDF of {S.REWARD} (further right is better)")}
    return Panel(data, spec)


def gap_counts(gap: np.ndarray) -> dict[str, int]:
    return {"ahead": int((gap > 0).sum()), "tied": int((gap == 0).sum()),
            "behind": int((gap < 0).sum())}


def reward_gap_curve(rows: pd.DataFrame) -> Panel | None:
    """reward − ref_reward of every sample sorted, as a quantile curve filled green above
    zero and red below; None when no sample has both rewards."""
    gap = _finite(rows, S.REWARD_GAP)
    if not gap.size:
        return None
    share, y = quantile_curve(gap)
    data = pd.DataFrame({SHARE: share, VALUE: y, AHEAD: np.maximum(y, 0),
                         BEHIND: np.minimum(y, 0)})
    x = {"field": SHARE, "type": "quantitative", "title": "share of samples (sorted by gap)",
         "axis": {"format": ".0%"}}

    def fill(field: str, colour: str) -> dict:
        return {"mark": {"type": "area", "color": colour, "opacity": 0.5, "tooltip": None},
                "encoding": {"x": x, "y": {"field": field, "type": "quantitative"},
                             "y2": {"datum": 0}}}

    line = {"mark": {"type": "line", "color": "#333", "strokeWidth": 1},
            "encoding": {"x": x, "y": {"field": VALUE, "type": "quantitative",
                                       "title": f"{S.REWARD} − {S.REF_REWARD}"},
                         "tooltip": [{"field": SHARE, "type": "quantitative", "format": ".0%",
                                      "title": "share of samples"},
                                     {"field": VALUE, "type": "quantitative", "format": "+.4g",
                                      "title": "gap at most"}]}}
    n = gap_counts(gap)
    title = (f"{S.REWARD_GAP} sorted: ahead {n['ahead']}, tied {n['tied']}, "
             f"behind {n['behind']} of {gap.size}")
    return Panel(data, {"height": HEIGHT, "layer": [fill(AHEAD, R.GAIN_COLOR),
                                                    fill(BEHIND, R.LOSS_COLOR), line],
                        **titled(title)})


def group_means(table: pd.DataFrame, bins: int = 20) -> Panel | None:
    """Histogram of the groups' reward means, stacked by kind (solved / mixed / unsolved);
    None without a finite mean."""
    means = table[S.stat(S.REWARD, "mean")].to_numpy(dtype=np.float64)
    finite = np.isfinite(means)
    if not finite.any():
        return None
    edges = np.histogram_bin_edges(means[finite], bins=bins)
    below = np.zeros(len(edges) - 1)
    frames, names = [], []
    for kind in ("solved", "mixed", "unsolved"):
        chosen = means[finite & (table[S.GROUP_KIND] == kind).to_numpy()]
        counts, _ = np.histogram(chosen, bins=edges)
        names.append(f"{kind} ({chosen.size})")
        frames.append(pd.DataFrame({SERIES: names[-1], LOW: edges[:-1], HIGH: edges[1:],
                                    COUNT: counts, BOTTOM: below, TOP: below + counts}
                                   )[counts > 0])
        below = below + counts  # stacked here: each kind on the ones before it
    return Panel(pd.concat(frames, ignore_index=True), _means_spec(names, len(table)))


def _means_spec(names: list[str], groups: int) -> dict:
    colours = [KIND_COLORS[kind] for kind in ("solved", "mixed", "unsolved")]
    return {"height": HEIGHT, "mark": {"type": "rect"}, "encoding": {
        "x": {"field": LOW, "type": "quantitative", "title": "group reward mean",
              "scale": {"zero": False}},
        "x2": {"field": HIGH},
        "y": {"field": BOTTOM, "type": "quantitative", "title": "groups"},
        "y2": {"field": TOP},
        "color": {"field": SERIES, "type": "nominal", "title": None, "legend": {
            "orient": "bottom"}, "scale": {"domain": names, "range": colours}},
        "tooltip": [{"field": SERIES, "type": "nominal", "title": "kind"},
                    {"field": LOW, "type": "quantitative", "format": ".3g"},
                    {"field": HIGH, "type": "quantitative", "format": ".3g"},
                    {"field": COUNT, "type": "quantitative", "title": "groups"}]},
        **titled(f"Group reward means ({groups} groups)")}



HEIGHT = 340
SHARE, AHEAD, BEHIND, BOTTOM, TOP = "share", "ahead", "behind", "bottom", "top"
