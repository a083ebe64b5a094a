"""Problems page: every bad line and bad field of the run, summarised by kind, a page at a
time, and downloadable (the sidebar only counts them)."""
from __future__ import annotations

import streamlit as st

from loaders.serve import export
from pages.figures import problems as build
from pages.figures import tables
from pages.frame.view import View
from pages.frame.widgets import page_number


def render(view: View) -> None:
    run = view.run
    st.header("Problems")
    found = run.problems
    if run.pending_bytes:
        st.caption(f"{run.pending_bytes:,} bytes of half-written lines are pending at file "
                   "ends: read once the trainer finishes them.")
    if not found:
        st.success("No bad line or field in this run.")
        return
    st.caption(f"{len(found):,} problems, each isolated: its line or field is left out and "
               "nothing else (a file's list is capped; the counts are exact).")
    st.dataframe(build.kinds(found), hide_index=True, width="stretch")
    frame = build.table(found)
    page = page_number(len(frame), "prpage")
    st.dataframe(tables.page_of(frame, page), hide_index=True, width="stretch")
    st.download_button("Download all (CSV)", key="x_problems", on_click="ignore",
                       file_name="problems.csv", mime="text/csv",
                       data=lambda: export.table_bytes(frame, "csv"))
