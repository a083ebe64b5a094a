"""Pure builders of the Tokens page: a token metric by position bin (x) and step (y), and the
step's hottest token strings as bars (ranked_bars)."""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pandas as pd

from pages.figures.ranked_bars import LABEL, LENGTH, RANK, VALUE, bar_list
from pages.figures.token_text import shown_token, token_style
from pages.figures.vega import CANVAS, ONE_MARK, title

# where lower is "hotter" the colours are flipped so the eye always goes to the red
_LOW_IS_HOT = ("logprob",)


def bin_labels(starts: list[float], relative: bool, abs_tokens: int = 512) -> list[str]:
    """'0–3 %' for relative bins, '0–511' for absolute ones."""
    if relative:
        step = 100 / max(1, len(starts))
        return [f"{i * step:.0f}–{(i + 1) * step:.0f} %" for i in range(len(starts))]
    return [f"{int(s)}–{int(s) + abs_tokens - 1}" for s in starts]


MAX_ROWS = 100  # rows of the heatmap at most: a longer run's steps are drawn in windows
# (a cell is a canvas mark with its tooltip: 200 rows of 32 bins took 0.35 s more of a
# fresh browser's first paint on the long run, benchmarks/bench_first_paint.py)
ROW, FIRST, LAST, BIN, ORDER, MEAN, TOKENS, TOP, BOTTOM = (
    "row", "first", "last", "bin", "order", "mean", "tokens", "top", "bottom")
PICK = "pick"  # the click selection's name: Streamlit reports it under this key


class Heat(NamedTuple):
    data: pd.DataFrame  # a cell a row: its steps, bin, token-weighted mean and tokens
    spec: dict
    steps_a_row: int  # 1, or the steps each row holds (a run longer than MAX_ROWS steps)


def steps_a_row(steps: int) -> int:
    """The steps each heatmap row holds: 1, or enough for MAX_ROWS rows at most."""
    return max(1, -(-steps // MAX_ROWS))


def windows(steps: list[int], means: np.ndarray, tokens: np.ndarray
            ) -> tuple[list[int], list[int], np.ndarray, np.ndarray]:
    """The steps in at most MAX_ROWS rows of consecutive steps: each row's first and last
    step, its token-weighted mean a bin (the cells are token-weighted means: so is a row's)
    and its tokens.  A run of 1,000 steps drawn at 900 pixels has no pixel a step anyway."""
    per_row = steps_a_row(len(steps))
    if per_row == 1:
        return list(steps), list(steps), means, tokens
    starts = np.arange(0, len(steps), per_row)
    weight = np.where(np.isfinite(means) & (tokens > 0), tokens, 0.0)
    total = np.add.reduceat(weight, starts, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.add.reduceat(np.where(weight > 0, means, 0.0) * weight, starts, axis=0) / total
    last = np.minimum(starts + per_row, len(steps)) - 1
    return ([steps[i] for i in starts], [steps[i] for i in last], mean,
            np.add.reduceat(np.nan_to_num(tokens), starts, axis=0))


def position_step_chart(steps: list[int], labels: list[str], means: np.ndarray,
                        tokens: np.ndarray, metric: str, step: int | None) -> Heat:
    """The metric by position bin (x) and step (y) as a Vega-Lite heatmap: a row a step, or
    a window of steps past MAX_ROWS; the chosen step's row outlined; a click on a row picks
    its first step.  The metric's name is a title drawn on the canvas: literal text."""
    firsts, lasts, mean, count = windows(steps, means, tokens)
    rows, bins = mean.shape if np.ndim(mean) == 2 else (0, 0)
    data = pd.DataFrame({
        ROW: np.repeat(np.arange(rows), bins), FIRST: np.repeat(firsts, bins).astype(np.int64),
        LAST: np.repeat(lasts, bins).astype(np.int64), BIN: np.tile(labels[:bins], rows),
        ORDER: np.tile(np.arange(bins), rows), MEAN: np.asarray(mean, np.float64).ravel(),
        TOKENS: np.asarray(count, np.float64).ravel()})
    data[TOP], data[BOTTOM] = data[FIRST] - 0.5, data[LAST] + 0.5
    data = data[np.isfinite(data[MEAN])]
    spec = _heat_spec(metric, _outline(firsts, lasts, step), rows)
    spec["layer"][0]["encoding"]["color"]["scale"] = colour_scale(data[MEAN].to_numpy(), metric)
    return Heat(data, spec, steps_a_row(len(steps)))


def colour_scale(means: np.ndarray, metric: str) -> dict:
    """The cells' colours: a metric that never goes below 0 (KL, entropy) on a sequential
    scale, one of both signs on a diverging scale white at 0; its ends at the 1st and 99th
    percentile of the cells (past them a cell takes the end's colour), so one outlier cell
    does not make every other cell the same colour (the review's S1)."""
    finite = means[np.isfinite(means)]
    if not len(finite):
        return {"scheme": "orangered"}
    low, high = (np.percentile(finite, [1, 99]) if len(finite) >= CLIP_FROM_CELLS
                 else (finite.min(), finite.max()))
    hot_low = metric in _LOW_IS_HOT
    if finite.min() >= 0 or finite.max() <= 0:  # one sign: from its quiet end to its hot one
        return {"scheme": "orangered", "reverse": hot_low,
                "domain": [float(low), float(high)], "clamp": True}
    return {"scheme": "redblue", "reverse": not hot_low, "domainMid": 0,
            "domain": [float(low), float(high)], "clamp": True}


CLIP_FROM_CELLS = 100  # fewer cells: the ends are the min and max


def _outline(firsts: list[int], lasts: list[int], step: int | None) -> tuple[float, float] | None:
    """The chosen step's row, as its top and bottom edge; None when it is no row's."""
    for first, last in zip(firsts, lasts):
        if step is not None and first <= step <= last:
            return first - 0.5, last + 0.5
    return None


def _heat_spec(metric: str, outline: tuple[float, float] | None, rows: int) -> dict:
    y = {"field": TOP, "type": "quantitative", "title": "step", "axis": {"format": "d"},
         "scale": {"reverse": True, "zero": False, "nice": False}}
    heat = {"mark": {"type": "rect"},
            "params": [{"name": PICK, "select": {"type": "point", "fields": [FIRST],
                                                 "on": "click", "clear": "dblclick"}}],
            "encoding": {
                "x": {"field": BIN, "type": "ordinal", "sort": {"field": ORDER},
                      "title": "position in the response", "axis": {"labelAngle": -45}},
                "y": y, "y2": {"field": BOTTOM},
                "color": {"field": MEAN, "type": "quantitative", "title": None},
                "tooltip": [{"field": FIRST, "type": "quantitative", "title": "first step"},
                            {"field": LAST, "type": "quantitative", "title": "last step"},
                            {"field": BIN, "type": "ordinal", "title": "position"},
                            {"field": MEAN, "type": "quantitative", "title": "mean",
                             "format": ".4g"},
                            {"field": TOKENS, "type": "quantitative", "title": "tokens",
                             "format": ",.0f"}]}}
    layers = [heat]
    if outline is not None:  # a rect without x spans the plot's width
        layers.append({"data": ONE_MARK,
                       "mark": {"type": "rect", "fill": None, "stroke": "#111",
                                "strokeWidth": 1.5},
                       "encoding": {"y": {"datum": outline[0], "type": "quantitative"},
                                    "y2": {"datum": outline[1]}}})
    row = max(4, min(24, 600 // max(rows, 1)))  # pixels a row: a few steps' rows stay big
    return {"height": min(900, 160 + rows * row), "layer": layers,
            "title": title(f"{metric} by position (x) and step (y)"),
            **CANVAS}


def step_of_pick(selection: dict) -> int | None:
    """The first step of the row a click picked (Vega-Lite's point selection names it by
    field: `{"pick": [{"first": 12}]}`); None when it names none."""
    picked = selection.get(PICK) or []
    try:
        step = float(picked[0][FIRST]) if picked else math.nan
    except (KeyError, TypeError, ValueError):
        return None
    return int(step) if math.isfinite(step) else None


def hot_table(table: pd.DataFrame) -> pd.DataFrame:
    """The hottest tokens with their pieces decoded and whitespace made visible."""
    style = token_style(table["token"].tolist())
    return table.assign(token=[shown_token(t, style) for t in table["token"]])


def hot_chart(table: pd.DataFrame, metric: str) -> tuple[pd.DataFrame, dict]:
    """(data, spec) of a bar a token string of `hot_table` (token, count, sum, mean, largest,
    sample, position), as long as its sum; its rank leads its label, as two token ids or
    pieces can look alike once whitespace is made visible."""
    total = table[f"{metric} sum"].to_numpy(dtype=np.float64)
    data = table.assign(**{RANK: np.arange(len(table)), LENGTH: total, VALUE: total,
                           LABEL: [f"{i + 1}. ⟦{t}⟧" for i, t in enumerate(table["token"])]})
    numbers = [{"field": f, "type": "quantitative", "format": ".4g"}
               for f in (f"{metric} sum", f"{metric} mean", f"{metric} largest")]
    tooltip = [{"field": "token", "type": "nominal"},
               {"field": "count", "type": "quantitative", "format": ",d"}, *numbers,
               {"field": "sample", "type": "nominal", "title": "sample of the largest"},
               {"field": "position", "type": "quantitative", "format": "d"}]
    return data, bar_list(data, f"{metric}, summed over the string's top tokens", tooltip)
