"""The app's one cache: loaded runs, keyed by dir and the dump's fingerprint."""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from pathlib import Path

import streamlit as st

import loaders
from loaders import schema as S
from loaders.serve.run import dump_fingerprint


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


class _Runs:
    """Loaded runs by (dir, dump fingerprint); a changed dump gets a new entry."""

    def __init__(self, size: int = 4) -> None:
        self.size = size
        self.lock = threading.Lock()
        self.runs: OrderedDict[tuple[str, str], loaders.Run] = OrderedDict()

    def get(self, path: Path, progress: _Progress) -> loaders.Run:
        key = (str(path), dump_fingerprint(path))
        with self.lock:
            if key not in self.runs:
                # loaded outside st.cache_resource's body so the progress bar is not replayed
                self.runs[key] = loaders.open_run(path, progress=progress)
            self.runs.move_to_end(key)
            while len(self.runs) > self.size:
                self.runs.popitem(last=False)
            return self.runs[key]


@st.cache_resource(show_spinner=False)
def _loaded_runs() -> _Runs:
    """The app's one cache_resource: every session shares the loaded runs."""
    return _Runs()


def load_run(path: Path) -> loaders.Run | None:
    """The loaded run, or None after showing why it could not be loaded."""
    progress = _Progress()
    try:
        return _loaded_runs().get(path, progress)
    except loaders.DumpError as err:
        st.error(str(err))
        return None
    finally:
        progress.clear()


def show_summary(run: loaders.Run) -> None:
    """Samples, steps and bad lines, with every recorded problem as file:line: reason."""
    frame = run.samples
    st.sidebar.caption(
        f"{len(frame):,} samples · {frame[S.STEP].nunique():,} steps · "
        f"{run.bad_lines:,} bad lines · {run.nan_values:,} non-finite values · "
        f"loaded in {run.seconds:.2f}s (index {run.cache})")
    if not run.problems and not run.pending_bytes:
        return
    with st.sidebar.expander(f"Problems ({len(run.problems):,})"):
        lines = [f"{p['file']}:{p['line']}: {p['reason']}"
                 + ("" if p["dropped"] else " (sample kept)") for p in run.problems]
        if run.pending_bytes:
            lines.append(f"{run.pending_bytes:,} bytes of half-written lines pending at file ends")
        st.code("\n".join(lines), language=None, wrap_lines=True)
