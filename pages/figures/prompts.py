"""Pure builders of the Prompts page: the run-wide prompt table and one prompt's history."""
from __future__ import annotations

import html

import numpy as np
import pandas as pd
import regex as regex_engine

from loaders import schema as S
from pages.figures.search import matching
from pages.figures.step_panels import Panel
from pages.figures.tables import previews
from pages.figures.vega import CANVAS, title
from pages.frame.view import DisplayOptions

ID = "id"  # the prompt id as text, for the URL and the selection
COLUMNS = (S.PROMPT_CATEGORY, S.STEPS_SEEN, S.PASS_RATE, S.stat(S.REWARD, "mean"),
           S.FIRST_SOLVED, S.LAST_UNSOLVED, S.PASS_TREND, S.ZERO_VARIANCE_STEPS, "last_step")
SORTS = {"steps seen": S.STEPS_SEEN, "pass rate": S.PASS_RATE,
         "pass-rate trend": S.PASS_TREND, "zero-variance steps": S.ZERO_VARIANCE_STEPS,
         "first step solved": S.FIRST_SOLVED, "last step unsolved": S.LAST_UNSOLVED,
         "reward mean": S.stat(S.REWARD, "mean"), "last step": "last_step"}


def filter_prompts(table: pd.DataFrame, flags: tuple[str, ...] = (),
                   regex: regex_engine.Pattern | None = None) -> pd.DataFrame:
    """Prompts carrying every chosen flag whose preview matches the regex."""
    keep = np.ones(len(table), dtype=bool)
    for flag in flags:
        keep &= table[flag].to_numpy(dtype=bool)
    if regex is not None:
        keep &= matching(regex, table[S.PROMPT].fillna("").tolist())
    return table[keep]


def counts(table: pd.DataFrame) -> dict[str, int]:
    """Prompts per flag (flags overlap), and how many were seen at one step only."""
    out = {flag: int(table[flag].sum()) for flag in S.PROMPT_FLAGS}
    out[S.SEEN_ONCE] = int((table[S.PROMPT_CATEGORY] == S.SEEN_ONCE).sum())
    return out


def counts_html(found: dict[str, int]) -> str:
    """The counts as one row of figures, each its name above its number: one HTML element
    where a metric widget each cost the page's first paint about 0.1 s more than Responses'
    (docs/benchmarks.md, session 21).  Names are the board's own flags, escaped anyway."""
    cells = "".join(
        f'<div><div style="font-size:0.875rem">{html.escape(name)}</div>'
        f'<div style="font-size:1.75rem;line-height:1.3">{count:,}</div></div>'
        for name, count in found.items())
    return ('<div class="rlb-counts" style="display:flex;flex-wrap:wrap;gap:0.25rem 3rem;'
            f'margin-bottom:0.25rem">{cells}</div>')


def prompt_rows(table: pd.DataFrame, options: DisplayOptions) -> pd.DataFrame:
    """The page's table: a prompt's text after its system prompt; where two rows then read
    the same, the start of each system prompt in a column of its own (a dataset asked with
    several system prompts is that many prompts, which looked like one twice)."""
    shown = pd.DataFrame({ID: table.index.astype(str),
                          S.PROMPT: previews(table[S.PROMPT], options, system=True)})
    marker = options.system_marker
    if marker and shown[S.PROMPT].duplicated(keep=False).any():
        before = table[S.PROMPT].fillna("").astype(str).str.rsplit(marker, n=1)
        shown[SYSTEM] = [" ".join(parts[0].split())[:SYSTEM_CHARS] if len(parts) > 1 else ""
                         for parts in before]
    for column in COLUMNS:
        shown[column] = table[column].to_numpy()
    return shown


SYSTEM, SYSTEM_CHARS = "system prompt", 48


def history_chart(steps: pd.DataFrame) -> Panel:
    """One prompt over the run: its group's reward mean and pass rate (left axis) and length
    (right axis, dotted) at every step it appears, a cross where its group had no reward
    variance (no learning signal).  Vega-Lite: a prompt opened loads no Plotly script."""
    x = steps[S.STEP].to_numpy(dtype=np.int64)
    frames = [pd.DataFrame({S.STEP: x, SERIES: name, VALUE: steps[column].to_numpy(float)})
              for name, column in _HISTORY]
    zero = steps[S.ZERO_VARIANCE].to_numpy(dtype=bool)
    frames.append(pd.DataFrame({S.STEP: x[zero], SERIES: ZERO,
                                VALUE: steps[S.PASS_RATE].to_numpy(float)[zero]}))
    data = pd.concat(frames, ignore_index=True).dropna(subset=[VALUE])
    names = [name for name, _ in _HISTORY] + [ZERO] * bool(zero.any())  # a legend of what is
    return Panel(data, _history_spec(names))  # drawn


def _history_spec(names: list[str]) -> dict:
    colour = {"field": SERIES, "type": "nominal", "title": None, "legend": {"orient": "bottom"},
              "scale": {"domain": names, "range": _COLOURS[:len(names)]}}
    at = {"field": S.STEP, "type": "quantitative", "title": S.STEP,
          "axis": {"format": "d", "tickMinStep": 1}, "scale": {"zero": False}}
    tooltip = [{"field": S.STEP, "type": "quantitative", "format": "d"},
               {"field": SERIES, "type": "nominal", "title": "of"},
               {"field": VALUE, "type": "quantitative", "format": ".3g"}]

    def layer(shown: list[str], mark: dict, y_title: str, **axis: str) -> dict:
        return {"transform": [{"filter": {"field": SERIES, "oneOf": shown}}], "mark": mark,
                "encoding": {"x": at, "color": colour, "tooltip": tooltip, "y": {
                    "field": VALUE, "type": "quantitative", "title": y_title, "axis": axis}}}

    # the reward mean a wide pale line under the pass rate: with 0/1 rewards the two are
    # one line, and the pass rate drawn over it hid it (the review's S7)
    left = {"layer": [layer(names[:1], {"type": "line", "point": True, "strokeWidth": 5,
                                        "opacity": 0.45}, "reward / pass rate"),
                      layer(names[1:2], {"type": "line", "point": True}, "reward / pass rate"),
                      layer([ZERO], {"type": "point", "shape": "cross", "size": 90,
                                     "filled": True}, "reward / pass rate")]}
    right = layer(names[2:3], {"type": "line", "point": True, "strokeDash": [2, 3]},
                  "tokens", orient="right")
    return {"height": 320, "layer": [left, right], **CANVAS,
            "resolve": {"scale": {"y": "independent"}},
            "title": title("This prompt's group at each step it appears")}


SERIES, VALUE, ZERO = "series", "value", "zero variance"
_COLOURS = ["#1f77b4", "#2ca02c", "#7f7f7f", "#000"]
_HISTORY = (("reward mean", S.stat(S.REWARD, "mean")), ("pass rate", S.PASS_RATE),
            ("length mean", S.stat(S.RESPONSE_LEN, "mean")))


def history_rows(steps: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        S.STEP: steps[S.STEP].to_numpy(), S.GROUP_SIZE: steps[S.GROUP_SIZE].to_numpy(),
        S.PASS_RATE: steps[S.PASS_RATE].to_numpy(),
        S.stat(S.REWARD, "mean"): steps[S.stat(S.REWARD, "mean")].to_numpy(),
        S.stat(S.RESPONSE_LEN, "mean"): steps[S.stat(S.RESPONSE_LEN, "mean")].to_numpy(),
        S.ZERO_VARIANCE: steps[S.ZERO_VARIANCE].to_numpy(),
        S.GROUP_ID: steps[S.GROUP_ID].astype(str).to_numpy()})
