"""Pure builders of the Prompts page: the run-wide prompt table and one prompt's history."""
from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import regex as regex_engine
from plotly.subplots import make_subplots

from loaders import schema as S
from pages.figures.axes import integer_steps
from pages.figures.search import matching
from pages.figures.tables import previews
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
    shown = pd.DataFrame({ID: table.index.astype(str),
                          S.PROMPT: previews(table[S.PROMPT], options, system=True)})
    for column in COLUMNS:
        shown[column] = table[column].to_numpy()
    return shown


def history_figure(steps: pd.DataFrame) -> go.Figure:
    """One prompt over the run: its group's reward mean and pass rate (left axis) and
    length (right axis) at every step it appears."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    x = steps[S.STEP].to_numpy()
    for column, name, color in ((S.stat(S.REWARD, "mean"), "reward mean", "#1f77b4"),
                                (S.PASS_RATE, "pass rate", "#2ca02c")):
        fig.add_trace(go.Scatter(x=x, y=steps[column], name=name, mode="lines+markers",
                                 line={"color": color}), secondary_y=False)
    fig.add_trace(go.Scatter(x=x, y=steps[S.stat(S.RESPONSE_LEN, "mean")], name="length mean",
                             mode="lines+markers", line={"color": "#7f7f7f", "dash": "dot"}),
                  secondary_y=True)
    zero = steps[steps[S.ZERO_VARIANCE]]
    fig.add_trace(go.Scatter(x=zero[S.STEP], y=zero[S.PASS_RATE], mode="markers",
                             name="zero variance", marker={"symbol": "x", "size": 10,
                                                           "color": "#000"}))
    fig.update_layout(title="This prompt's group at each step it appears", height=320,
                      hovermode="x unified", xaxis_title=S.STEP,
                      legend={"orientation": "h", "y": -0.3})
    fig.update_yaxes(title_text="reward / pass rate", secondary_y=False)
    fig.update_yaxes(title_text="tokens", secondary_y=True)
    return integer_steps(fig, x)


def history_rows(steps: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        S.STEP: steps[S.STEP].to_numpy(), S.GROUP_SIZE: steps[S.GROUP_SIZE].to_numpy(),
        S.PASS_RATE: steps[S.PASS_RATE].to_numpy(),
        S.stat(S.REWARD, "mean"): steps[S.stat(S.REWARD, "mean")].to_numpy(),
        S.stat(S.RESPONSE_LEN, "mean"): steps[S.stat(S.RESPONSE_LEN, "mean")].to_numpy(),
        S.ZERO_VARIANCE: steps[S.ZERO_VARIANCE].to_numpy(),
        S.GROUP_ID: steps[S.GROUP_ID].astype(str).to_numpy()})
