"""Problems page: every bad line and bad field of the run, summarised by kind, a page at a
time, and downloadable (the sidebar only counts them)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from loaders.serve import export
from pages.figures import problems as build
from pages.figures import tables
from pages.figures.text import counted, visible_controls
from pages.frame.view import View
from pages.frame.widgets import page_number


def render(view: View) -> None:
    run = view.run
    st.header("Problems")
    found, around, pending = run.problems, run.read_around, run.pending_lines
    if not (found or len(around) or pending):
        st.success("No bad line or field in this run.")
        return
    if found:
        _problem_list(found)
    else:
        st.success("No bad line or field in this run.")
    if len(around):
        _read_around(around, run.read_around_count)
    if pending:
        st.subheader("Half-written lines")
        st.caption("Pending at a file's end: read once the trainer finishes the line (a line "
                   "being written is no problem).")
        pending = [{**p, "file": visible_controls(p["file"])} for p in pending]
        st.dataframe(pd.DataFrame(pending, columns=["file", "line", "bytes"]),
                     hide_index=True, width="stretch")


def _problem_list(found: list[dict]) -> None:
    st.caption(f"{counted(len(found), 'problem')}, each isolated: its line or field is left "
               "out and nothing else (a file's list is capped; the counts are exact).")
    st.dataframe(build.kinds(found), hide_index=True, width="stretch")
    frame = build.table(found)
    page = page_number(len(frame), "prpage")
    st.dataframe(tables.page_of(frame, page), hide_index=True, width="stretch")
    st.download_button("Download all (CSV)", key="x_problems", on_click="ignore",
                       file_name="problems.csv", mime="text/csv",
                       data=lambda: export.table_bytes(frame, "csv"))


def _read_around(around: pd.DataFrame, samples: int) -> None:
    """The samples kept whose values the board read around, a row a reason, a page at a
    time."""
    st.subheader("Samples kept, values read around")
    st.caption(f"{counted(samples, 'sample')}, each kept and shown: its per-token figures are "
               "of its finite tokens only, and token lists of different lengths are cut to "
               "the shortest (the dump format's alignment rule).")
    around = around.assign(file=around["file"].map(visible_controls))
    page = page_number(len(around), "rapage")
    st.dataframe(tables.page_of(around, page), hide_index=True, width="stretch")
    st.download_button("Download all (CSV)", key="x_read_around", on_click="ignore",
                       file_name="read_around.csv", mime="text/csv",
                       data=lambda: export.table_bytes(around, "csv"))
