"""Streamlit widgets the pages share."""
from __future__ import annotations

import html

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from pages.figures import tables
from pages.figures.text import visible_controls
from pages.frame import state

PERCENT = st.column_config.NumberColumn(format="percent")
ROW_PX = 36


def picked_row(frame: pd.DataFrame, key: str, max_height: int = 460,
               column_config: dict | None = None) -> int | None:
    """Show frame as a table the user selects one row of; the row's position the first
    time it is picked (a selection stays in the widget across reruns), else None."""
    event = st.dataframe(frame, key=key, on_select="rerun", selection_mode="single-row",
                         hide_index=True, width="stretch",
                         height=min(ROW_PX * (len(frame) + 1) + 3, max_height),
                         column_config=column_config)
    picked = (event or {}).get("selection", {}).get("rows", [])
    if state.fresh(key, tuple(picked)) and picked:
        return picked[0]
    return None


def text_block(text: str, height: int | None = None, box: DeltaGenerator | None = None) -> None:
    """Model text as escaped, wrapped, scrollable preformatted text.

    Not st.code: its syntax highlighter is a 1.5 MB script the browser fetches and runs on
    every fresh page (about half a second of main-thread time here) to show plain text.
    """
    limit = f"max-height:{height}px;" if height else ""
    (box or st).html(f'<pre class="rlb-text" style="{limit}overflow:auto;white-space:pre-wrap;'
                     'overflow-wrap:anywhere;margin:0;padding:0.6rem 0.8rem;font-size:0.85rem;'
                     "font-family:'Source Code Pro',monospace;"
                     'background:#f6f7f9;border-radius:0.5rem">'
                     f"{html.escape(visible_controls(text))}</pre>")


def page_number(rows: int, key: str) -> int:
    """The page of a table of `rows` rows (tables.PAGE_ROWS a page) the user is on: a
    number input kept in the URL, shown only when there is more than one page."""
    pages = tables.page_count(rows)
    if pages == 1:
        return 1
    return min(int(st.number_input("Page", 1, pages, 1, key=key, bind="query-params")), pages)
