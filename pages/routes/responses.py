"""Responses page: the step's samples as a sortable, searchable, filterable table."""
from __future__ import annotations

import html

import pandas as pd
import streamlit as st
from regex import Pattern

from loaders import schema as S
from loaders.serve import export
from loaders.serve.cache import Texts
from loaders.serve.images import row_thumbnails
from pages.figures import sample_header as header
from pages.figures import tables
from pages.figures.search import SearchTooSlow, compile_search, highlight
from pages.figures.text import literal
from pages.frame import keys, state
from pages.frame.loading import checked_texts
from pages.frame.view import View
from pages.frame.widgets import page_number, picked_row
from pages.routes import response_filters as filters
from pages.routes.response_clusters import cluster_filter
from pages.routes.sample.conversation_filters import conversation_filter

MAX_MATCHES = 50


def _controls(view: View, rows: pd.DataFrame) -> tuple[str, str, bool, str]:
    choices = tables.sort_choices(view.options.kl_estimator)
    left, mid, right = st.columns([2, 1, 3])
    sort_label = left.selectbox("Sort by", list(choices) + ["(any column)"], key="sort",
                                bind="query-params")
    column = choices.get(sort_label)
    if column is None:
        column = left.selectbox("Column", [c for c in rows.columns if c not in (S.FILE,)],
                                key="col", bind="query-params")
    descending = mid.toggle("Descending", value=True, key="desc", bind="query-params")
    pattern = right.text_input("Regex search (prompt and response)", key="q", bind="query-params")
    return column, sort_label if sort_label in choices else column, descending, pattern


IMAGE = "image"  # the table's thumbnail column (the prompt's first image)


def render(view: View) -> None:
    rows = _rows(view)
    st.header(f"Responses · step {view.step}")
    column, sort_label, descending, pattern = _controls(view, rows)
    reward_range, flags = filters.reward_and_flags(filters.run_reward_bounds(view))
    lag_range = filters.lag_range(rows)
    agent = conversation_filter(rows, "")  # turns, tools, tool errors, finish reason
    agent = agent & cluster_filter(view, rows)  # one cluster of near-duplicate answers
    ranged = filters.column_range(rows)
    if ranged is not None:
        agent = agent & ranged.to_numpy()
    regex, error = compile_search(pattern)
    if error:
        st.error(literal(error))
    texts = _full_texts(view, rows) if regex else None
    kept, regex = _filtered(rows[agent], reward_range, flags, regex, texts, lag_range)
    shown = tables.sort_rows(kept, column, descending)
    _remember(view, shown, header.order_label(sort_label, descending, len(shown), len(rows)))
    page = _paged(shown, len(rows))
    table = tables.arranged(tables.table_view(page, view.options), column)
    config = {tables.KEY: None}
    thumbs = row_thumbnails(view.run.root, view.run.store, page)  # decoded in the server
    if any(thumbs):
        table.insert(1, IMAGE, thumbs)
        config[IMAGE] = st.column_config.ImageColumn(IMAGE, width="small")
    if column in table.columns and column != tables.KEY:  # the app's sort, shown as the arrow
        # pinned: the sorted column stays on screen left of the wide text columns
        config[column] = st.column_config.Column(f"{column} {'↓' if descending else '↑'}",
                                                 pinned=True)
    picked = picked_row(table, table_key(column, descending), 640, config)
    if picked is not None:
        state.go("sample", sample=table[tables.KEY].iloc[picked])
    _export(view, shown)
    if regex:
        _matches(shown, texts, regex)


def _filtered(rows: pd.DataFrame, reward_range: tuple[float, float] | None,
              flags: tuple[str, ...], regex: Pattern | None, texts: dict[str, str] | None,
              lag_range: tuple[int, int] | None = None) -> tuple[pd.DataFrame, Pattern | None]:
    """The rows the filters keep, and the search applied: one that runs out of time is an
    error above the table, which then shows the rows the other filters keep."""
    try:
        return tables.filter_rows(rows, reward_range, flags, regex, texts, lag_range), regex
    except SearchTooSlow as err:
        st.error(literal(str(err)))
        return tables.filter_rows(rows, reward_range, flags, lag_range=lag_range), None


def table_key(column: str, descending: bool) -> str:
    """The table's widget key.  A header click sorts the grid in the browser (only the rows
    of its page), and Streamlit can't turn that off; a new key per app sort starts a new
    grid, so changing Sort by or Descending drops the header's sort and its arrow."""
    return f"t_responses:{column}:{'desc' if descending else 'asc'}"


def _remember(view: View, shown: pd.DataFrame, how: str) -> None:
    """The table's order for the Sample page's previous / next buttons: widget values are
    dropped once another page is drawn, so it keeps the keys themselves."""
    st.session_state[keys.SAMPLE_ORDER] = {"run": str(view.run.root), "step": view.step,
                               "keys": shown[S.KEY].tolist(), "how": how}


def _export(view: View, shown: pd.DataFrame) -> None:
    """Download the table (every page of it) with full texts, or its samples' own lines.
    The files are made when a button is clicked, on a thread of their own."""
    run, name = view.run, f"step{view.step}"
    count = min(len(shown), export.MAX_ROWS)
    with st.popover("Export", icon=":material/download:"):
        st.caption(f"The {count:,} rows of this table in its order"
                   + (f" (the first {count:,} of {len(shown):,})" if count < len(shown) else "")
                   + ": CSV or Parquet with every column and the full texts; JSONL with "
                     "each sample's own line as the trainer wrote it.")
        for fmt, mime in (("csv", "text/csv"), ("parquet", "application/vnd.apache.parquet")):
            st.download_button(fmt.upper(), key=f"x_{fmt}", on_click="ignore", mime=mime,
                               file_name=f"{name}.{fmt}", data=lambda f=fmt: export.table_bytes(
                                   export.full_table(run, shown), f))
        st.download_button("JSONL (samples)", key="x_jsonl", on_click="ignore",
                           mime="application/jsonl", file_name=f"{name}.jsonl",
                           data=lambda: export.jsonl_bytes(run, shown))


def _paged(shown: pd.DataFrame, total: int) -> pd.DataFrame:
    """One page of the sorted rows: the browser's grid gets 500 rows, not 8,192."""
    page = page_number(len(shown), "rpage")
    st.caption(f"{len(shown):,} of {total:,} samples{tables.rows_note(len(shown), page)} · "
               "select a row to open it · Sort by orders the whole step (its column's header "
               "shows ↓ or ↑); a click on a header re-sorts only the rows of this page, in "
               "the browser")
    return tables.page_of(shown, page)


def _rows(view: View) -> pd.DataFrame:
    """The step's trained samples, and its left-out ones when the sidebar asks."""
    rows = view.run.step_rows(view.step)
    left_out = view.run.left_out
    if view.options.show_left_out and left_out is not None and left_out.size:
        more = view.run.with_previews(left_out.step(view.step))
        rows = pd.concat([rows, more], ignore_index=True) if len(more) else rows
    return rows


def _full_texts(view: View, rows: pd.DataFrame) -> dict:
    found = view.run.step_texts(view.step)
    extra = [key for key in rows[S.KEY] if key not in found]  # left-out samples shown
    if extra:
        more = view.run.texts(extra)
        found = Texts({**found, **more}, found.stale | more.stale)
    found = checked_texts(view.run, found)
    return {key: texts[S.PROMPT] + "\n" + texts[S.RESPONSE] for key, texts in found.items()}


def _matches(shown: pd.DataFrame, texts: dict[str, str], regex: Pattern) -> None:
    keys = shown[S.KEY].tolist()[:MAX_MATCHES]
    if not keys:  # st.html refuses an empty body
        st.caption("No sample matches the search.")
        return
    with st.expander(f"Matches in {len(shown)} samples (first {len(keys)} shown)",
                     expanded=True):
        st.html("".join(f'<div class="match"><b>{html.escape(key)}</b>'
                        f' — {highlight(texts.get(key, ""), regex)}</div>' for key in keys))
