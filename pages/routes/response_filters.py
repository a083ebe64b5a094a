"""The Responses page's filters: a reward range, flags, a policy-lag range and a range of
any numeric column (what a histogram bar clicked on the Rewards page opens)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from loaders import schema as S
from pages.figures import ranges, tables

NO_COLUMN = "(no column)"


def column_range(rows: pd.DataFrame) -> pd.Series | None:
    """Keep the rows whose chosen column is in a range: what a click on a histogram bar of
    the Rewards page (a reward component, the reference reward) opens.  None: no filter."""
    numeric = [c for c in rows.columns if c not in (S.FILE, S.KEY, S.ROW)
               and pd.api.types.is_numeric_dtype(rows[c]) and not pd.api.types.is_bool_dtype(
                   rows[c]) and rows[c].notna().any()]
    asked_for = st.session_state.get("fcol") not in (None, NO_COLUMN)
    box = st.expander("Filter by any column", expanded=asked_for)
    chosen = box.selectbox("Only samples with a column in a range", [NO_COLUMN, *numeric],
                           key="fcol", bind="query-params")
    if chosen == NO_COLUMN:
        return None
    values = rows[chosen].astype(float)
    bounds = ranges.column_bounds(values)
    if bounds is None:  # one value (or none): no range to choose
        return values == values.min()
    _clamp("frange", bounds)  # a clicked bar's bounds, kept inside the column's range
    chosen_range = ranges.opened(box.slider(f"{chosen} range", *bounds, bounds, key="frange",
                                            bind="query-params"), bounds)
    return None if chosen_range is None else values.between(*chosen_range)


def _clamp(key: str, bounds: ranges.Range) -> None:
    """A range asked for before its slider is drawn (a clicked histogram bar), kept inside
    the slider's bounds: a bar's edge may pass them."""
    asked = st.session_state.get(key)
    if isinstance(asked, (list, tuple)) and len(asked) == 2:
        st.session_state[key] = ranges.clamped(asked, bounds)


def lag_range(rows: pd.DataFrame) -> tuple[int, int] | None:
    """A policy-lag range to keep, offered when this step's samples are of several lags."""
    lag = rows[S.POLICY_LAG].dropna() if S.POLICY_LAG in rows else rows[S.REWARD].iloc[:0]
    if lag.empty or lag.min() == lag.max():
        return None
    lo, hi = int(lag.min()), int(lag.max())
    chosen = st.slider("Policy lag", lo, hi, (lo, hi), key="lag", bind="query-params",
                       help="updates between the weights that drew a sample and the step "
                            "that trains on it (async RL)")
    return None if chosen == (lo, hi) else chosen


def reward_and_flags(rows: pd.DataFrame
                     ) -> tuple[tuple[float, float] | None, tuple[str, ...]]:
    """The reward range to keep (offered when the step's rewards differ) and the flags asked
    for."""
    bounds = ranges.reward_bounds(rows[S.REWARD])
    left, right = st.columns(2)
    reward_range = None
    if bounds is not None:
        _clamp("reward", bounds)  # a clicked histogram bar's bounds may pass the step's
        reward_range = ranges.opened(left.slider("Reward range", *bounds, bounds,
                                                 key="reward", bind="query-params"), bounds)
    flags = right.multiselect("Only samples flagged", list(tables.FLAG_LABELS),
                              format_func=tables.FLAG_LABELS.get, key="flags", bind="query-params")
    return reward_range, tuple(flags)
