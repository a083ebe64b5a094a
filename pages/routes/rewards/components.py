"""The Rewards page's reward components: their means over the run, and at the chosen step
how they move together, where they disagree, and each one's histogram (a bar opens its
samples in Responses)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from loaders import schema as S
from loaders.health import rewards as parts
from pages.figures import ranges
from pages.figures import reward_parts as build
from pages.figures import rewards as histograms
from pages.figures.text import literal
from pages.frame import state
from pages.frame.view import View
from pages.frame.widgets import picked_row
from pages.routes.response_filters import run_reward_bounds


def over_the_run(view: View, names: list[str], rows: pd.DataFrame) -> None:
    table = view.run.derived_table(parts.means_table_name(names),
                                   lambda: parts.means_by_step_of(view.run.numbers, names))
    chart = build.components_chart(table, names, parts.add_up(rows, names))
    st.vega_lite_chart(chart.data, chart.spec, width="stretch", key="c_components")


def at_the_step(view: View, names: list[str], rows: pd.DataFrame) -> None:
    # a table, not a chart: one chart fewer to draw in the browser
    st.caption(f"step {view.step}: how the reward and its components move together (Pearson)")
    st.dataframe(parts.correlations(rows, names).round(3), width="stretch")
    shown = st.selectbox("Histogram of", names, key="component", bind="query-params")
    chart = build.component_histogram(rows, shown)
    if chart is None:
        st.caption(literal(f"No finite {shown} at this step."))  # a name from the dump
    else:
        event = st.vega_lite_chart(chart.data, chart.spec, width="stretch", key="c_component",
                                   on_select="rerun", selection_mode=histograms.BIN)
        picked = histograms.picked_bin((event or {}).get("selection") or {}, (shown,))
        if picked is not None:
            open_bin(*picked, view)
    found = parts.disagreements(rows, names)
    st.caption(f"{len(found):,} samples where one component is at the step's best and "
               "another at its worst (format right, answer wrong: the classic hack) · "
               "select a row to open it")
    picked = picked_row(found, "t_disagree", 300, {S.KEY: None})
    if picked is not None:
        state.go("sample", sample=found[S.KEY].iloc[picked])


def open_bin(column: str, low: float, high: float, view: View) -> None:
    """The Responses table of the step, filtered to a histogram bar's samples (the bar's
    range kept inside the slider's bounds there, so that the link can carry it)."""
    bounds = (run_reward_bounds(view) if column == S.REWARD
              else ranges.column_bounds(view.run.step_rows(view.step)[column]))
    picked = (low, high) if bounds is None else ranges.clamped((low, high), bounds)
    if column == S.REWARD:
        state.go("responses", step=view.step, reward=picked)
    else:
        state.go("responses", step=view.step, fcol=column, frange=picked)
