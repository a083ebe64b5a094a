"""The Sample page's token views: overview strips of the whole response, a window of a few
hundred tokens (inline, and as a table on request), and jumps to the tokens that matter.

The page's size does not grow with the response: the strips are binned, the window and the
jump list are bounded.  The window's start is the URL parameter `window` (a token row);
the pager, the position box, a brush across the strips and a bar of the jump list all
move it, the last three through callbacks that run before the page is drawn.

The jump list is a chart and the window's table waits for its toggle: with no data grid on
it, a fresh Sample page loads no grid script (docs/benchmarks.md, session 27).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from loaders import Sample
from loaders import schema as S
from loaders.serve.tokenizer import TokenizerUnavailable, decode_ids
from pages.figures import ranked_bars, strip_stack, token_jumps, token_strip, token_top, tokens
from pages.figures import token_colours as C
from pages.figures.text import literal
from pages.figures.token_text import IDS, token_style
from pages.frame import keys
from pages.frame.view import View

WINDOW = tokens.WINDOW
_ROWS = "_sample_rows"  # session: (token count, rows of the jump table) for the callbacks
_SHOWN = "_sample_shown"  # session: the sample whose window the session holds
STRIPS = "c_strips"  # the strips' chart: its brush moves the window
JUMPS = "c_jumps"  # the jump list's chart: a click on a bar moves the window


def show(sample: Sample, view: View) -> None:
    frame = tokens.drop_padding(sample.tokens, view.options.pad_token)
    if frame.empty:
        st.info("This sample has no token-level data.")
        return
    frame = _decoded(frame.reset_index(drop=True), sample.key, view.options.tokenizer_dir)
    n, available = len(frame), tokens.token_metrics(frame)
    default = tokens.default_metrics(available, view.options.kl_estimator)
    left, mid, right = st.columns([3, 1, 1])
    chosen = left.multiselect("Token metrics", available, default=default, key="tm",
                              bind="query-params")
    colour = mid.selectbox("Colour tokens by", available, key="colour", bind="query-params",
                           index=tokens.default_colour(available))
    mode = right.segmented_control("Colour scale", C.SCALE_MODES, key="cscale",
                                   default=C.FIXED, bind="query-params", required=True,
                                   help="fixed: the same colours in every sample (docs/pages.md); "
                                        "this sample: the hot end at its 99th percentile"
                                   ) or C.FIXED
    texts = frame[S.TOKEN].tolist()
    style = token_style(texts)
    kind = ("token ids (no tokenizer set: set one in the sidebar to decode)" if style == IDS
            else f"{style} token texts")
    st.caption(f"{n} tokens (pad tokens dropped) · {kind} · hover a token for "
               "all its values · drag across the strips to move the window there")
    strip_box, jump_box = st.container(), st.container()
    start = _window_controls(sample.key, n)
    with jump_box:
        marked, hits = _jumps(frame, texts, available, view, style)
    with strip_box:
        _strips(frame, texts, chosen, (start, min(n, start + WINDOW)), hits)
    part = tokens.window(frame, start)
    scale = C.scale_for(colour, frame[colour].to_numpy(dtype=float), mode)
    st.html(C.legend_html(colour, scale, mode)
            + tokens.inline_html(part, colour, available, scale, style,
                                 frozenset(marked.tolist())))
    if chosen and st.toggle("The window's values as a table", key="w_table",
                            bind="query-params"):
        st.dataframe(tokens.metrics_table(part, chosen, style), hide_index=True,
                     width="stretch", height=388)


def _window_controls(key: str, n: int) -> int:
    """The pager and position box; the window's first row."""
    jumped = st.session_state.pop(keys.SAMPLE_JUMPED, None) == key
    if st.session_state.get(_SHOWN) not in (None, key) and not jumped:
        st.session_state[keys.WINDOW] = 0  # another sample: start at its beginning
    st.session_state[_SHOWN] = key
    asked = int(st.session_state.get(keys.WINDOW) or 0)
    if _placed(asked, n) != asked:
        st.session_state[keys.WINDOW] = _placed(asked, n)
    prev, box, nxt, where = st.columns([1, 2, 1, 4], vertical_alignment="bottom")
    prev.button("◀ previous", key="w_prev", on_click=_move, args=(-WINDOW, n),
                width="stretch")
    start = box.number_input("Window start (token)", min_value=0, step=WINDOW, key=keys.WINDOW,
                             bind="query-params")
    nxt.button("next ▶", key="w_next", on_click=_move, args=(WINDOW, n), width="stretch")
    start = _placed(int(start or 0), n)  # a link's value, read by the box as it is drawn
    where.caption(f"tokens {start}–{min(n, start + WINDOW) - 1} of {n}")
    return start


def _placed(start: int, n: int) -> int:
    """A window start inside the response: one past its end (typed, a link) is its last
    whole window, not a window of one token."""
    return start if start <= max(0, n - 1) else max(0, n - WINDOW)


def _move(delta: int, n: int) -> None:
    start = int(st.session_state.get(keys.WINDOW) or 0) + delta
    st.session_state[keys.WINDOW] = max(0, min(start, max(0, n - 1)))


def _jump_to(row: int, n: int) -> None:
    """Put a token a quarter into the window, so the tokens before it show too."""
    st.session_state[keys.WINDOW] = max(0, min(row - WINDOW // 4, max(0, n - WINDOW)))


def _strips(frame: pd.DataFrame, texts: list[str], chosen: list[str], window: tuple[int, int],
            hits: dict[str, np.ndarray]) -> None:
    if not chosen:
        return
    columns = {m: frame[m].to_numpy(dtype=float) for m in chosen}
    marks = token_strip.think_marks(texts)
    if S.TURN in frame:  # a multi-turn response: where each turn starts
        marks = sorted(marks + token_strip.turn_marks(frame[S.TURN].to_numpy()))
    strips = token_strip.strip_charts(columns, window, marks, hits)
    data, spec = strip_stack.stacked(strips)
    st.vega_lite_chart(data, spec, key=STRIPS, on_select=_strip_selected,
                       selection_mode=token_strip.BRUSH, width="stretch")


def _strip_selected() -> None:
    selection = (st.session_state.get(STRIPS) or {}).get("selection") or {}
    n = st.session_state.get(_ROWS, (0, []))[0]
    row = token_strip.position_of(selection, n)
    if row is not None:
        st.session_state[keys.WINDOW] = max(0, min(row, max(0, n - 1)))


def _jumps(frame: pd.DataFrame, texts: list[str], available: list[str], view: View,
           style: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Top tokens (or those past a threshold) as bars that jump the window; the rows it
    lists and, when thresholded, the hits per metric for the strips."""
    ranks = token_top.rankings(available, view.options.kl_estimator)
    if not ranks:
        st.session_state[_ROWS] = (len(frame), [])
        return np.zeros(0, dtype=np.int64), {}
    if st.session_state.get("top") not in (None, *ranks):
        del st.session_state["top"]
    left, right = st.columns([3, 1])
    label = left.selectbox("Jump to the top tokens by", list(ranks), key="top",
                           bind="query-params")
    threshold = right.number_input("…or every token past", value=None, key="thr",
                                   bind="query-params", format="%.4g",
                                   placeholder="threshold (off)")
    ranking = ranks[label]
    values = frame[ranking.column].to_numpy(dtype=float)
    if threshold is None:
        rows, hits = token_top.top_positions(values, ranking), {}
        # "lowest prob" says its own order; the others rank the largest first
        what = (f"the {len(rows)} tokens with the {label}" if not ranking.largest
                else f"the {len(rows)} tokens with the largest {label}")
    else:
        every = token_top.past_positions(values, ranking, threshold)
        rows, hits = every[: token_top.MAX_PAST], {ranking.column: every}
        what = (f"{len(every)} tokens past {threshold:g} ({label})"
                + (f", the first {len(rows)} listed" if len(every) > len(rows) else ""))
    st.session_state[_ROWS] = (len(frame), rows.tolist())
    st.caption(f"{what} · click a bar to move the window there")
    if len(rows):
        table = token_top.token_rows(frame, rows, ranking.column, style, texts)
        data, spec = token_jumps.jump_chart(table, ranking)
        st.vega_lite_chart(data, spec, key=JUMPS, on_select=_bar_selected,
                           selection_mode=ranked_bars.PICK, width="stretch")
    return rows, hits


def _bar_selected() -> None:
    selection = (st.session_state.get(JUMPS) or {}).get("selection") or {}
    rank = ranked_bars.rank_of_pick(selection)
    n, rows = st.session_state.get(_ROWS, (0, []))
    if rank is not None and rank < len(rows):
        _jump_to(rows[rank], n)


def _decoded(frame: pd.DataFrame, key: str, tokenizer_dir: str) -> pd.DataFrame:
    """Token ids shown as text when the user points at a local tokenizer (decoded once a
    sample and tokenizer, so moving the window decodes nothing)."""
    if not tokenizer_dir:
        return frame
    memo = st.session_state.setdefault("_sample_decoded", {})
    if (key, tokenizer_dir) not in memo:
        try:
            texts = decode_ids(frame[S.TOKEN].tolist(), tokenizer_dir)
        except TokenizerUnavailable as err:
            st.warning(literal(str(err)))
            return frame
        memo.clear()  # one sample's worth: a session holds no more
        memo[(key, tokenizer_dir)] = texts
    return frame.assign(**{S.TOKEN: memo[(key, tokenizer_dir)]})
