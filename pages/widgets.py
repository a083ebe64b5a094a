"""Streamlit widgets the pages share."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from pages import state

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
