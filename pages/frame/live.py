"""Following a live run: the Follow toggle, a timer fragment that polls the run's files, and
a step that keeps to the newest one unless the user picked another.

The fragment reruns alone every $RL_BOARD_POLL_SECONDS (default 1 s): it asks the run's
Follower (loaders.serve.follow: stats of the known files, a walk for new files at most every
30 s) whether the run grew, and only then reruns the whole page, so charts, health panels and
alerts are drawn from the grown run.  An idle tick costs the stats and one small caption.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

import loaders
from loaders.find.remote import is_url
from loaders.serve.follow import Beat
from pages.figures.text import literal
from pages.frame import keys
from pages.frame.keys import STEP
from pages.frame.loading import follower

RECENT_SECONDS = 300  # Follow is on by default when a dump file changed this recently
POLL_ENV = "RL_BOARD_POLL_SECONDS"
DEFAULT_POLL_SECONDS = 1.0


def poll_seconds() -> float:
    """$RL_BOARD_POLL_SECONDS (default 1 s), at least 0.2 s."""
    try:
        return max(0.2, float(os.environ.get(POLL_ENV, DEFAULT_POLL_SECONDS)))
    except ValueError:
        return DEFAULT_POLL_SECONDS


def _newest_write_ns(run: loaders.Run) -> int:
    return max((state.mtime_ns for state in run.files.values()), default=0)


def _default_on(run_dir: Path, run: loaders.Run) -> bool:
    """On when the run's newest file changed in the last RECENT_SECONDS; decided once per
    session and run dir, so the toggle does not flip by itself when the run goes quiet."""
    kept = st.session_state.get(keys.FOLLOW_DEFAULT)
    if kept is None or kept[0] != str(run_dir):
        recent = time.time_ns() - _newest_write_ns(run) < RECENT_SECONDS * 1e9
        kept = st.session_state[keys.FOLLOW_DEFAULT] = (str(run_dir), recent)
    return kept[1]


def follow(base: Path, run_dir: Path, run: loaders.Run, named: Path | None = None) -> bool:
    """The Follow toggle and, when on, the live indicator that polls the run; True when on.
    `named` is the dump dir as the user named it, before links were resolved: a link
    swapped to another run is then noticed on the next tick."""
    if is_url(base):  # polling object storage every few seconds costs requests: Refresh
        st.sidebar.caption("Follow is off for dump dirs on object storage: use Refresh.")
        return False
    on = st.sidebar.toggle(
        "Follow", value=_default_on(run_dir, run), key=keys.FOLLOW, bind="query-params",
        help="Watch the run while it trains: new lines appear within seconds, and the step "
             "stays on the newest one unless you pick another. On by default when a dump "
             f"file changed in the last {RECENT_SECONDS // 60} minutes.")
    if on:
        with st.sidebar:
            named_run = None if named is None else str(named / run_dir.relative_to(base))
            _ticker(str(base), str(run_dir), run, named_run)
    return on


def _on_timer() -> bool:
    """True when this run is the fragment's own timer tick, not part of a full page run."""
    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.fragment_ids_this_run)


@st.fragment(run_every=poll_seconds())
def _ticker(base: str, run_dir: str, shown: loaders.Run, named_run: str | None) -> None:
    """Only a timer tick polls: a full page run that polled too would restart itself on
    every growth and, while a trainer writes faster than the page draws, never finish."""
    poller = follower(Path(base), Path(run_dir), poll_seconds() / 2)
    if named_run is not None and _on_timer() and not poller.leads_here(Path(named_run)):
        st.rerun(scope="app")  # the full run resolves the name again and opens that run
    try:
        beat = poller.poll() if _on_timer() else poller.last()
    except loaders.DumpError as err:
        st.caption(literal(f"live · paused: {err}"))  # a path is text, not Markdown
        return
    if beat is None:
        beat = Beat(shown, _newest_write_ns(shown), False)
    elif beat.run is not shown and _on_timer():
        st.rerun(scope="app")
    st.caption(_indicator(beat), help="Checked every "
               f"{poll_seconds():g} s: the run's files are stat'ed, the dir is walked for new "
               "files every 30 s (Refresh walks it now)")


def _indicator(beat: Beat) -> str:
    if not beat.last_write_ns:
        return "live · no file written yet"
    ago = max(0.0, (time.time_ns() - beat.last_write_ns) / 1e9)
    return f"live · last line {_duration(ago)} ago"


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"


def keep_newest(steps: list[int], following: bool) -> None:
    """While following, a step left at the newest one moves on to the new newest; a step the
    user picked (any other) stays pinned.  Picking the newest step again follows again."""
    newest = steps[-1] if steps else None
    before = st.session_state.get(keys.NEWEST)
    st.session_state[keys.NEWEST] = newest
    if not following or newest is None or before is None or before == newest:
        return
    if st.session_state.get(STEP) == before:
        st.session_state[STEP] = newest
