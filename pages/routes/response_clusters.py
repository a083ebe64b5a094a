"""The step's response clusters on Responses and Groups: a chooser that keeps one cluster's
samples, and (opened) the cluster table and the diversity over the run."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from loaders.serve.clusters import diversity_curve, step_clusters
from loaders.serve.locations import parsed
from pages.figures import clusters as F
from pages.frame import state
from pages.frame.view import View
from pages.frame.widgets import PERCENT


def clusters_of(view: View, rows: pd.DataFrame) -> tuple[pd.Series, pd.DataFrame]:
    """(each row's cluster, the step's cluster table) of the rows shown: made once a step
    and rows (the left-out ones shown or not), from the index's signatures."""
    key = ("clusters", view.step, len(rows), view.options.pass_threshold)
    return view.run.derived(key, lambda: step_clusters(rows, view.options.pass_threshold))


def cluster_filter(view: View, rows: pd.DataFrame, key: str = "cluster") -> np.ndarray:
    """Which rows the chosen cluster keeps (all of them for "All clusters"), the chooser
    drawn; the table and the diversity curve in an expander below it."""
    ids, table = clusters_of(view, rows)
    options = [F.ALL, *table.index[:F.SHOWN]]
    for asked in (st.query_params.get(key), st.session_state.get(key)):
        if isinstance(asked, str) and asked not in options and parsed(asked) is not None:
            options.append(asked)  # a cluster of another step (a sample key names it) stays
    state.seed_token(key, options, F.ALL, lambda c: F.choice_label(table, c))  # chosen
    # its parameter is the cluster's name (its first answer's key), not the label: a bound
    # chooser wrote "4,732 responses (58%): <think> Let me…" into the link
    chosen = st.selectbox("Response cluster", options, key=key,
                          format_func=lambda c: F.choice_label(table, c),
                          help="near-duplicate responses: the same words, numbers aside")
    state.write_token(key, chosen, F.ALL)
    box = st.expander("Response clusters", key=f"{key}_open", on_change="rerun",
                      bind="query-params")
    if box.open:  # drawn only once opened (a closed expander's table is still sent)
        _panel(view, table, len(rows), box)
    return np.ones(len(rows), dtype=bool) if chosen == F.ALL else (ids == chosen).to_numpy()


def _panel(view: View, table: pd.DataFrame, count: int, box: st.delta_generator.DeltaGenerator
           ) -> None:
    box.caption(F.summary(table, count))
    box.dataframe(F.cluster_rows(table), hide_index=True, width="stretch",
                  column_config={"share": PERCENT, "pass rate": PERCENT})
    if box.toggle("Diversity over the run", key="diversity", bind="query-params"):
        chart = F.diversity_chart(diversity_curve(view.run))
        if chart is None:
            box.caption("No step has clustered responses.")
        else:
            box.vega_lite_chart(chart.data, chart.spec, width="stretch", key="c_diversity")
