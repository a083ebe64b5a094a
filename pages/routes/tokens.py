"""Tokens page: where in long responses the policy changes, across steps, and which token
strings carry the KL (or the rollout/trainer mismatch) in the chosen step.

Everything comes from the token digests the index keeps (a few hundred bytes per file and
step), and the heatmap from their grids, kept beside the index once made: no dump file is
read here.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from loaders import schema as S
from loaders.serve import token_grid as G
from loaders.serve import token_summary as T
from loaders.serve.tokenizer import TokenizerUnavailable, decode_ids
from pages.figures import ranked_bars
from pages.figures import token_heat as build
from pages.figures.text import literal
from pages.frame import keys, state
from pages.frame.view import View

SCALES = {T.RELATIVE: "relative position (32 bins of each response)",
          T.ABSOLUTE: "absolute position (512-token bins)"}
WINDOW_LEAD = 64  # the Sample page's window starts this many tokens before a hot token


def render(view: View) -> None:
    st.header(f"Tokens · step {view.step}")
    metrics = G.grid_metrics(_grids(view, T.RELATIVE))
    if not metrics:
        st.info("No token summaries: this dump has no per-token logprobs, reference "
                "logprobs, entropy or mismatch_kl.")
        return
    _heatmap(view, metrics)
    _hot(view)


def _grids(view: View, scale: str) -> pd.DataFrame:
    """Every metric's grid at this scale, made from the token digests once and kept beside
    the index (loaders.serve.token_grid)."""
    return view.run.derived_table(G.NAME.format(scale=scale),
                                  lambda: G.grid_table(view.run.token_digests(), scale))


def _heatmap(view: View, metrics: list[str]) -> None:
    left, right = st.columns([1, 2])
    if st.session_state.get("tok_metric") not in (None, *metrics):
        del st.session_state["tok_metric"]
    metric = left.selectbox("Token metric", metrics, key="tok_metric", bind="query-params",
                            index=metrics.index(S.K3) if S.K3 in metrics else 0)
    scale = right.segmented_control("Position", list(SCALES), format_func=SCALES.get,
                                    default=T.RELATIVE, key="tok_scale", bind="query-params",
                                    required=True) or T.RELATIVE
    grid = G.grid_of(_grids(view, scale), metric, scale)
    labels = build.bin_labels(grid.starts, scale == T.RELATIVE)
    heat = build.position_step_chart(grid.steps, labels, grid.means, grid.tokens, metric,
                                     view.step)
    rows = (f"each row {heat.steps_a_row} steps, their token-weighted mean; click a row to "
            "choose its first step" if heat.steps_a_row > 1
            else "click a row to choose its step")
    st.caption(f"Token-weighted mean over the step's samples; {rows}.")
    event = st.vega_lite_chart(heat.data, heat.spec, key="c_tok_heat", on_select="rerun",
                               selection_mode=build.PICK, width="stretch")
    step = build.step_of_pick((event or {}).get("selection") or {})
    if state.fresh("c_tok_heat", step) and step is not None and step != view.step:
        state.select(step=step)


def _hot(view: View) -> None:
    rows = view.run.step_rows(view.step)
    found = T.digests(rows)
    hot_metrics = [m for m in (S.K3, "mismatch_kl") if any(d.hot.get(m) for d in found)]
    if not hot_metrics:
        return
    st.subheader("The step's hottest tokens")
    if st.session_state.get("tok_hot") not in (None, *hot_metrics):
        del st.session_state["tok_hot"]
    metric = st.selectbox("Carrying the most", hot_metrics, key="tok_hot",
                          bind="query-params",
                          format_func=lambda m: "KL (k3)" if m == S.K3 else m)
    table = build.hot_table(_decoded(T.hot_tokens(found, metric, rows),
                                     view.options.tokenizer_dir))
    st.caption("Token strings among the step's top tokens by the metric (about one token in "
               "1,024 of each file's part of the step), by how much they carry in all; "
               "hover a bar for its count, mean and largest, click it to open the sample "
               "with the largest there.")
    data, spec = build.hot_chart(table, metric)
    event = st.vega_lite_chart(data, spec, key="c_tok_hot", on_select="rerun",
                               selection_mode=ranked_bars.PICK, width="stretch")
    rank = ranked_bars.rank_of_pick((event or {}).get("selection") or {})
    if (state.fresh("c_tok_hot", rank) and rank is not None and rank < len(table)
            and table["sample"].iloc[rank]):
        row = table.iloc[rank]
        # the Sample page keeps the window asked for
        st.session_state[keys.SAMPLE_JUMPED] = row["sample"]
        state.go("sample", sample=row["sample"], step=view.step,
                 window=max(0, int(row["position"]) - WINDOW_LEAD))


def _decoded(table: pd.DataFrame, tokenizer_dir: str) -> pd.DataFrame:
    """Token ids (prime-rl, NeMo-RL) as text when the user points at a local tokenizer."""
    if not tokenizer_dir or table.empty:
        return table
    try:
        return table.assign(token=decode_ids(table["token"].tolist(), tokenizer_dir))
    except TokenizerUnavailable as err:
        st.warning(literal(str(err)))
        return table
