"""Sample page: one response next to its reference, and its tokens."""
from __future__ import annotations

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from loaders import Sample
from loaders import schema as S
from loaders.serve.images import sample_images
from pages.figures import sample_header as header
from pages.figures.text import literal, strip_pad, strip_system
from pages.figures.token_text import clipped
from pages.frame import state
from pages.frame.keys import SAMPLE, SAMPLE_ORDER, STEP
from pages.frame.loading import recover_stale
from pages.frame.view import View
from pages.frame.widgets import text_block
from pages.routes.sample import conversation
from pages.routes.sample import tokens as sample_tokens


def _choose(view: View, rows: pd.DataFrame) -> str | None:
    keys = rows[S.KEY].tolist()
    # a link's sample is in the URL alone until the selectbox is drawn
    asked = st.session_state.get(SAMPLE) or state.query(SAMPLE)
    if asked not in (None, *keys):
        _elsewhere(view, str(asked))
        st.session_state.pop(SAMPLE, None)  # a sample of another step: start at the first
    st.session_state[_SHOWN_AT] = (str(view.run.root), view.step)
    pick, back, ahead = st.columns([6, 2, 2], vertical_alignment="bottom")
    # the key itself is the label: a bound selectbox keeps its label in the URL
    key = pick.selectbox("Sample (file:line)", keys, key=SAMPLE, bind="query-params")
    if key is not None:
        _steps(view, keys, key, back, ahead)
    return key


def _elsewhere(view: View, asked: str) -> None:
    """A sample asked for that is not at the step shown.  After a step changed on this page,
    the step's first sample is shown.  Else (a link: the board leaves the step out of one
    made at the latest step, which a live run then moves past) the sample's own step is
    opened (a link without a step has it already: sidebar.step_of_linked_sample); a key the
    run does not have is said."""
    if st.session_state.get(_SHOWN_AT) not in (None, (str(view.run.root), view.step)):
        return  # the step (or the run) changed here: its first sample
    step = view.run.store.step_of(asked)
    if step is None:
        st.caption(literal(f"This run has no sample {asked}: the step's first is shown."))
    elif step != view.step:
        state.select(**{STEP: step, SAMPLE: asked})  # reruns at the sample's step


_SHOWN_AT = "_sample_shown_at"  # (run, step) this page last showed a sample of


def _steps(view: View, keys: list[str], key: str, *columns: DeltaGenerator) -> None:
    """Previous / next buttons, with keyboard shortcuts, through the step's samples."""
    order, how = _order(view, keys, key)
    place = header.place_in(order, key)
    for column, (label, shortcut, to) in zip(columns, (
            ("◀ previous sample", "k", place.previous), ("next sample ▶", "j", place.next))):
        # a plain letter: Streamlit ignores it while a text box has the focus
        column.button(label, key=f"s_{shortcut}", shortcut=shortcut, on_click=_open, args=(to,),
                      disabled=to is None, width="stretch",
                      help=literal(f"The {label.strip('◀▶ ')} {how}; keyboard: "
                                   f"{shortcut.upper()}"))
    st.caption(literal(f"sample {place.index + 1:,} of {place.total:,}, {how}"))


def _order(view: View, keys: list[str], key: str) -> tuple[list[str], str]:
    """The step's samples in the Responses table's last order and filters, when that table
    showed this step and holds this sample; else in file:line order."""
    saved = st.session_state.get(SAMPLE_ORDER)
    if saved and saved["run"] == str(view.run.root) and saved["step"] == view.step:
        here = set(keys)
        order = [k for k in saved["keys"] if k in here]  # left-out samples open elsewhere
        if key in order:
            return order, f"in the Responses order: {saved['how']}"
    return keys, "in file:line order (open Responses to follow its sort and filters)"


def _open(key: str) -> None:
    # a callback runs before the page is drawn: the bound selectbox then shows the new key
    st.session_state[SAMPLE] = key


def _texts(sample: Sample, view: View) -> None:
    opts = view.options
    left, mid, right = st.columns(3)
    for column, key, title, text in (
            (left, S.PROMPT, "Prompt", strip_system(sample.texts[S.PROMPT], opts.system_marker)),
            (mid, S.RESPONSE, "Response", strip_pad(sample.texts[S.RESPONSE], opts.pad_token)),
            (right, S.REF_RESPONSE, "Reference response",
             strip_pad(sample.texts[S.REF_RESPONSE], opts.pad_token))):
        column.markdown(f"**{title}**")
        text_block(clipped(text) or header.no_text(title, key in sample.absent), 320,
                   column)
    if sample.texts[S.GROUND_TRUTH]:
        st.caption("ground truth")
        text_block(sample.texts[S.GROUND_TRUTH], 160)


def _images(sample: Sample, view: View) -> None:
    """The prompt's images, decoded and re-encoded in the server; a placeholder and the
    reason for one that is not shown, a remote URL as text (never fetched)."""
    if not sample.images:
        return
    shown = sample_images(view.run.root, sample)
    st.markdown(f"**Images in the prompt** ({len(shown)})")
    for start in range(0, len(shown), IMAGES_PER_ROW):
        for column, image in zip(st.columns(IMAGES_PER_ROW), shown[start:start + IMAGES_PER_ROW]):
            if image.png is not None:
                column.image(image.png, caption=f"{image.width} x {image.height}",
                             output_format="PNG")  # lossless, as decoded
            else:
                column.warning(literal(f"image not shown: {image.problem}"), icon="🖼️")
                if image.text:
                    column.caption(literal(image.text))


IMAGES_PER_ROW = 4


def _figures(view: View, rows: pd.DataFrame, key: str, nan: frozenset[str]) -> None:
    """The sample's own numbers (from its summary row, as the Responses table shows them)
    beside the step's means; `nan`: the scalars its record holds as NaN."""
    row = rows[rows[S.KEY] == key].iloc[0]
    stats = view.run.step_stats
    step = stats.loc[view.step] if view.step in stats.index else None
    figures = header.sample_figures(row, step, view.options.kl_estimator, nan)
    for start in range(0, len(figures), 4):
        for column, figure in zip(st.columns(4), figures[start:start + 4]):
            column.metric(figure.label, figure.value, figure.delta, delta_color="off")


def render(view: View) -> None:
    rows = view.run.step_rows(view.step)
    st.header(f"Sample · step {view.step}")
    key = _choose(view, rows)
    if key is None:
        return
    sample = view.run.sample(key)
    if sample.error:
        # none of the sample's values: a stale one's are not what the index says
        st.error(literal(sample.error))
        if sample.stale:
            recover_stale(view.run, {sample.file})
        return
    _figures(view, rows, key, sample.nan_scalars)
    _images(sample, view)
    _texts(sample, view)
    conversation.show(sample, view)  # multi-turn samples: turns, tool calls, per-turn metrics
    if sample.raw_lengths and len(set(sample.raw_lengths.values())) > 1:
        lengths = ", ".join(f"{k}={v}" for k, v in sample.raw_lengths.items())
        st.warning(f"Length mismatch: {literal(lengths)}; token arrays aligned at the first "
                   "token and cut to the shortest.")
    sample_tokens.show(sample, view)
