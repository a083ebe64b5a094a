"""The app's one cache: a Catalog per dump dir (its sub-runs and loaded runs), shared by
every session; the disk is looked at again only when refresh(base) is called."""
from __future__ import annotations

import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TypeVar

import streamlit as st

import loaders
from loaders.find.remote import stat_of
from loaders.serve.cache import Texts
from loaders.serve.catalog import Catalog
from loaders.serve.follow import Follower
from loaders.serve.follow import follower as follower_of
from pages.figures import problems
from pages.figures.text import counted, literal
from pages.frame import keys

T = TypeVar("T")

MAX_DIRS = 8  # dump dirs kept (compared runs may each be one); loaders.serve.budget bounds
# the memory of the runs they hold together


class _Progress:
    """Progress bar with throughput, fed by the loader's (done, total) bytes callback."""

    def __init__(self) -> None:
        self.bar = None
        self.started = time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = st.progress(0.0)
        rate = done / max(time.perf_counter() - self.started, 1e-6) / 1e6
        self.bar.progress(min(done / max(total, 1), 1.0),
                          text=f"Loading {done / 1e6:,.0f} / {total / 1e6:,.0f} MB · "
                               f"{rate:,.0f} MB/s")

    def clear(self) -> None:
        if self.bar is not None:
            self.bar.empty()


@st.cache_resource(show_spinner=False, max_entries=MAX_DIRS)
def _catalog(base: str) -> Catalog:
    """The catalog of one dump dir, shared by every session.  Making it touches no disk: it
    walks on first use, outside this body, so cache_resource never replays a progress bar."""
    return Catalog(base)


def sub_runs(base: Path) -> list[str]:
    """The sub-runs of the dump dir (itself as '.'), from its one walk; no disk access after
    the first call until refresh(base)."""
    return _catalog(str(base)).sub_runs()


def sub_run_formats(base: Path) -> dict[str, frozenset[str]]:
    """By sub-run, the dump formats of its first files (from the same one walk)."""
    return _catalog(str(base)).sub_run_formats()


def _attempt(action: Callable[[_Progress], T]) -> T | None:
    """Run one load with a progress bar; a DumpError becomes its one-line message (None)."""
    progress = _Progress()
    try:
        return action(progress)
    except loaders.DumpError as err:
        st.error(literal(str(err)))
        return None
    finally:
        progress.clear()


def load_run(path: Path, base: Path | None = None) -> loaders.Run | None:
    """The loaded run of path (base, or a sub-run dir under it), or None after showing why it
    could not be loaded.  Pass the dump dir as base so refresh(base) also updates this run."""
    run = _attempt(lambda progress: _catalog(str(base or path)).run(path, progress))
    if run is not None:
        st.session_state[keys.LOADED] = (base or path, path)  # for recover_stale
    return run


def compare_run(path: Path, base: Path) -> loaders.Run | None:
    """A run opened for a comparison, from base's catalog; like load_run, but it does not
    become this rerun's run (the sidebar's run stays the one a stale read re-parses)."""
    return _attempt(lambda progress: _catalog(str(base)).run(path, progress))


def follower(base: Path, run_dir: Path, min_gap: float) -> Follower:
    """The one poller of run_dir's files in base's catalog, shared by every session."""
    return follower_of(_catalog(str(base)), run_dir, min_gap)


def refresh(base: Path) -> None:
    """Look at the dump dir again: new files, appended lines, metric logs, alerts.toml.
    A reload that stalls is one message; the runs read before stay in use."""
    _attempt(lambda progress: _catalog(str(base)).refresh(progress))


def reparse(base: Path, run_dir: Path, files: Collection[str]) -> bool:
    """Open run_dir (base, or a sub-run dir under it) again with `files` parsed whole, for
    every session; False after showing why it could not be."""
    catalog = _catalog(str(base))
    return _attempt(lambda progress: catalog.reparse(run_dir, files, progress)) is not None


def checked_texts(run: loaders.Run, found: Texts) -> Texts:
    """Full texts a search reads, their changed files said (their samples are left out of
    the search: what the files hold now belongs to no row of the table) and re-parsed."""
    if found.stale:
        names = ", ".join(sorted(found.stale))
        st.error(literal(f"{names}: changed on disk since it was indexed; its samples are "
                         "left out of the search until it is read again"))
        recover_stale(run, found.stale)
    return found


def recover_stale(run: loaders.Run, files: Collection[str]) -> None:
    """After a read of this rerun's run found `files` changed since indexing (the page has
    shown the error): re-parse them and rerun the page, by itself once per file version
    per session, then only when the user asks.  Once per version, because a file the
    re-parse cannot bring into agreement (rewritten again in between, say) would otherwise
    rerun the page forever."""
    where = st.session_state.get(keys.LOADED)
    if where is None or not files:
        return
    base, run_dir = where
    versions = {(rel, _version(run.root / rel)) for rel in files}
    done = st.session_state.setdefault(keys.REPARSED, set())
    if not versions <= done:
        done.update(versions)
        if reparse(base, run_dir, files):
            st.rerun()
        return
    if st.button("Reload changed file", key="reload_stale",
                 help="Parse the changed file again, so its rows and samples agree"
                 ) and reparse(base, run_dir, files):
        st.rerun()


def _version(path: Path) -> tuple[int, ...] | None:
    """What tells one version of a file from the next; None when it cannot be stat'ed."""
    try:
        stat = stat_of(path)  # a URL's object too (loaders.find.remote)
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino


SIDEBAR_KINDS = 3


def show_summary(run: loaders.Run) -> None:
    """Samples, steps and bad lines, with every recorded problem as file:line: reason."""
    st.sidebar.caption(
        f"{counted(run.size, 'sample')} · {counted(len(run.steps), 'step')} · "
        f"{run.bad_lines:,} bad lines · {run.nan_values:,} non-finite values · "
        f"loaded in {run.seconds:.2f}s (index {run.cache})")
    for note in run.notes:
        st.sidebar.caption(literal(note))
    around = run.read_around_count
    if not run.problems and not run.pending_bytes and not around:
        return
    # a count per kind here; the list itself, a page at a time, on the Problems page
    top = problems.kinds(run.problems).head(SIDEBAR_KINDS)
    lines = [f"{row.count:,} × {row.kind}" for row in top.itertuples()]
    if run.pending_bytes:
        lines.append(f"{run.pending_bytes:,} bytes of half-written lines pending")
    if around:
        lines.append(f"{counted(around, 'sample')} kept with values read around")
    st.sidebar.caption(literal("\n".join(lines)))
    label = f"All {len(run.problems):,} problems" + (f" · {around:,} read around" * bool(around))
    st.sidebar.page_link(st.session_state[keys.PAGES]["problems"], label=label,
                         icon=":material/error:")
