"""One GRPO group opened: every answer side by side, the full text of one, and a word diff.

Drawn under the Groups page's table; the group is the URL's `gid` parameter (`group` in
earlier links, a name the Metrics page also used for its own choice).
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from loaders import schema as S
from loaders.serve.images import row_thumbnails
from pages.figures import diff
from pages.figures import groups as build
from pages.figures.text import literal, strip_pad, strip_system
from pages.frame import state
from pages.frame.keys import GROUP, OLD_GROUP
from pages.frame.view import View
from pages.frame.widgets import picked_row, text_block

CARDS_PER_ROW = 4


def _choose(table: pd.DataFrame) -> int | None:
    """The group the URL names (`gid`), set by a row of the table above.  A text box, not
    a selectbox: a bound selectbox writes its label to the URL, and a prompt is no label."""
    _open_old_link()
    typed = st.text_input("Group id", key=GROUP, bind="query-params",
                          placeholder="select a row above").strip()
    if not typed:
        return None
    try:
        group_id = int(typed)
    except ValueError:
        group_id = None
    if group_id not in table.index:
        st.warning(literal(f"No group {typed[:40]} at this step; select a row above."))
        return None
    return group_id


def _open_old_link() -> None:
    """An earlier link's `?group=ID` still opens its group, when it is a group id and the
    URL names no `gid`.  The box takes the id; the URL keeps `group` (rewriting it would add
    a history entry), which names the same view on a reload."""
    old = st.query_params.get(OLD_GROUP, "")
    if GROUP in st.query_params or GROUP in st.session_state or not _is_group_id(old):
        return
    st.session_state[GROUP] = old


def _is_group_id(text: str) -> bool:
    return text.removeprefix("-").isdigit()


def render(view: View, table: pd.DataFrame) -> None:
    st.subheader("One group")
    group_id = _choose(table)
    if group_id is None:
        return
    members = view.groups.members(view.step, group_id, view.group_options)
    texts = view.run.texts(members[S.KEY].tolist())
    if texts.stale:
        st.error(literal(f"{', '.join(sorted(texts.stale))}: changed on disk since it was "
                         "indexed; its answers are left out until it is read again"))
    prompt = next((t[S.PROMPT] for t in texts.values()), members[S.PROMPT].iloc[0])
    text_block(strip_system(prompt, view.options.system_marker) or "(empty prompt)", 140)
    _answers_table(view, members, bool(table.at[group_id, S.UNDER_TWO_REWARDS]))
    responses = {key: strip_pad(texts[key][S.RESPONSE], view.options.pad_token)
                 for key in members[S.KEY] if key in texts}
    _cards(members, responses)
    _full_text(members, responses)
    _diff(members, responses)


def _answers_table(view: View, members: pd.DataFrame, under_two_rewards: bool) -> None:
    shown = build.answers(members, view.options.kl_estimator)
    st.caption(build.answers_caption(len(shown), under_two_rewards))
    config = {S.KEY: None}
    thumbs = row_thumbnails(view.run.root, view.run.store, members)  # the prompt's image
    if any(thumbs):
        shown.insert(1, "image", thumbs)
        config["image"] = st.column_config.ImageColumn("image", width="small")
    picked = picked_row(shown, "t_answers", 400, config)
    if picked is not None:
        state.go("sample", sample=shown[S.KEY].iloc[picked])


def _cards(members: pd.DataFrame, responses: dict[str, str]) -> None:
    records = members.to_dict("records")
    for start in range(0, len(records), CARDS_PER_ROW):
        for column, (rank, row) in zip(st.columns(CARDS_PER_ROW),
                                       enumerate(records[start:start + CARDS_PER_ROW], start + 1)):
            column.caption(_card_title(rank, row))
            text_block(build.head_tail(responses.get(row[S.KEY], "")) or "(empty)", 220,
                       column)


def _card_title(rank: int, row: dict) -> str:
    parts = [f"#{rank}", f"reward {build.figure(row[S.REWARD], '.4g')}",
             f"adv {build.figure(row[S.ADVANTAGE], '+.3g')}",
             f"{row[S.RESPONSE_LEN]:,} tokens"]
    if row[S.TRUNCATED]:
        parts.append("truncated" + (" (inferred)" if row.get(S.TRUNCATION_INFERRED) else ""))
    if row[S.EXCLUDED_BY]:
        parts.append(f"left out: {row[S.EXCLUDED_BY]}")
    return literal(" · ".join(parts))


def _full_text(members: pd.DataFrame, responses: dict[str, str]) -> None:
    keys = members[S.KEY].tolist()
    rank = st.selectbox("Full text of answer", range(1, len(keys) + 1), index=None,
                        key="gfull", bind="query-params", placeholder="pick an answer #")
    if rank is not None and rank <= len(keys):
        text_block(responses.get(keys[rank - 1], "") or "(empty)", 420)


@st.cache_data(max_entries=32, show_spinner=False)
def _diff_html(old: str, new: str) -> tuple[str, tuple[int, int]]:
    segments = diff.word_diff(old, new)
    return diff.diff_html(segments), diff.changed_share(segments)


def _diff(members: pd.DataFrame, responses: dict[str, str]) -> None:
    keys = members[S.KEY].tolist()
    if len(keys) < 2:
        return
    ranks = list(range(1, len(keys) + 1))
    left, right = st.columns(2)
    a = left.selectbox("Diff: from answer", ranks, index=0, key="da", bind="query-params")
    b = right.selectbox("to answer", ranks, index=len(ranks) - 1, key="db",
                        bind="query-params")
    body, (removed, added) = _diff_html(responses.get(keys[a - 1], ""),
                                        responses.get(keys[b - 1], ""))
    st.caption(f"Word diff #{a} → #{b}: {removed:,} words removed, {added:,} added "
               "(unchanged runs folded)")
    st.html(body)
