"""The Responses page's filters: a reward range, flags, a policy-lag range and a range of
any numeric column (what a histogram bar clicked on the Rewards page opens)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from loaders import schema as S
from pages.figures import ranges, tables
from pages.frame.view import View

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
    _fit("frange", bounds, chosen)  # a clicked bar's bounds, kept inside the column's range
    chosen_range = ranges.opened(_drawn("frange", bounds, chosen, box.slider(
        f"{chosen} range", *bounds, bounds, key="frange", bind="query-params")), bounds)
    return None if chosen_range is None else values.between(*chosen_range)


def _fit(key: str, bounds: ranges.Range, of: str = S.REWARD) -> None:
    """The range slider `key` (of column `of`) fitted to this draw's bounds before it is
    drawn.  A range the slider showed at its last draw, untouched since, follows the new
    bounds (ranges.followed: another step's values; a new column starts whole); a range
    asked for since (a clicked histogram bar, a link, Back) is kept inside them: a bar's
    edge may pass them."""
    asked = st.session_state.get(key)
    if not (isinstance(asked, (list, tuple)) and len(asked) == 2):
        return
    last = st.session_state.get(_last(key))  # (column, bounds, range) as last drawn
    if last is not None and tuple(map(float, asked)) == last[2]:
        asked = ranges.followed(asked, last[1], bounds) if last[0] == of else bounds
    fitted = ranges.clamped(asked, bounds)
    st.session_state[key] = tuple(map(type(bounds[0]), fitted))  # an int slider's ints


def _drawn(key: str, bounds: ranges.Range, of: str, shown: tuple) -> tuple:
    """The slider's range as drawn, remembered with its bounds for the next draw (_fit)."""
    st.session_state[_last(key)] = (of, bounds, tuple(map(float, shown)))
    return shown


def _last(key: str) -> str:
    return f"_{key}_drawn"


def lag_range(rows: pd.DataFrame) -> tuple[int, int] | None:
    """A policy-lag range to keep, offered when this step's samples are of several lags."""
    lag = rows[S.POLICY_LAG].dropna() if S.POLICY_LAG in rows else rows[S.REWARD].iloc[:0]
    if lag.empty or lag.min() == lag.max():
        return None
    lo, hi = int(lag.min()), int(lag.max())
    _fit("lag", (lo, hi), S.POLICY_LAG)
    chosen = st.slider("Policy lag", lo, hi, (lo, hi), key="lag", bind="query-params",
                       help="updates between the weights that drew a sample and the step "
                            "that trains on it (async RL)")
    _drawn("lag", (lo, hi), S.POLICY_LAG, chosen)
    return None if chosen == (lo, hi) else chosen


def run_reward_bounds(view: View) -> ranges.Range | None:
    """The Reward range slider's bounds at every step: the run's finite rewards (its index's
    reward column, 20 ms a million samples, once a run).  The slider is then the same from
    step to step, so its range, its state and its link stay one filter of reward values (a
    slider made anew at each step kept its last step's range as a filter no link showed)."""
    return view.run.derived("reward_bounds", lambda: ranges.reward_bounds(
        view.run.columns([S.REWARD])[S.REWARD]))


def reward_and_flags(bounds: ranges.Range | None
                     ) -> tuple[tuple[float, float] | None, tuple[str, ...]]:
    """The reward range to keep (offered when the run's rewards differ: `bounds`,
    run_reward_bounds) and the flags asked for."""
    left, right = st.columns(2)
    reward_range = None
    if bounds is not None:
        _fit("reward", bounds)  # another step's range, or a clicked bar's
        reward_range = ranges.opened(_drawn("reward", bounds, S.REWARD, left.slider(
            "Reward range", *bounds, bounds, key="reward", bind="query-params")), bounds)
    flags = right.multiselect("Only samples flagged", list(tables.FLAG_LABELS),
                              format_func=tables.FLAG_LABELS.get, key="flags", bind="query-params")
    return reward_range, tuple(flags)
