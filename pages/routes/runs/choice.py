"""Which runs the Compare runs page compares: sub-runs of the dump dir and extra dirs, each
with a stable colour and a short label; all of it in the URL (`runs`, `extra`, `labels`).

`runs` holds each sub-run's path, the dump dir itself as `.`: tokens, not the chooser's
text (a bound multiselect writes its display text, so this one keeps its own parameter)."""
from __future__ import annotations

import html
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

import loaders
from loaders.find.paths import resolve_dump_dir
from pages.figures import runs as build
from pages.figures.text import literal
from pages.frame import keys, state
from pages.frame.board import parse_config
from pages.frame.keys import SPLIT
from pages.frame.loading import compare_run, sub_runs
from pages.frame.sidebar import BoardConfig

WHOLE_DIR = "."  # the dump dir itself, as a sub-run and as its token in the URL
WHOLE_DIR_TEXT = "(the dump dir itself)"  # what the chooser shows; links made before the
# token held carry it, and still open
RUNS = "runs"
DEFAULT_RUNS = 2  # sub-runs chosen on a first visit, so the page shows something at once
MAX_RUNS = 8


@dataclass(frozen=True)
class Member:
    """One compared run."""
    name: str  # its identity: a sub-run's path under the dump dir, or an extra dir's path
    label: str
    colour: str
    run: loaders.Run  # the samples the single-run pages would show (split, trained only)
    params: dict[str, str]  # the URL parameters that open it on the single-run pages


def _config() -> BoardConfig:
    return parse_config(sys.argv[1:])


def _extra_dirs(typed: str) -> list[Path]:
    """The extra dirs typed (one per line), each resolved under --root (a URL only where the
    operator allowed it: loaders.find.reach); refusals shown."""
    dirs = []
    config = _config()
    for line in typed.splitlines():
        if not line.strip():
            continue
        path, error = resolve_dump_dir(line.strip(), config.root, reach=config.reach())
        if error:
            st.error(literal(f"Extra run dir: {error}"))
        elif path not in dirs:
            dirs.append(path)
    return dirs


def _chosen(base: Path) -> tuple[list[str], list[Path]]:
    options = sub_runs(base)
    default = [r for r in options if r != WHOLE_DIR][:DEFAULT_RUNS]
    default = default if len(default) >= 2 else []
    _seed_from_url(options, default)
    left, right = st.columns([3, 2])
    names = left.multiselect(
        "Runs", options, key=RUNS, max_selections=MAX_RUNS,
        format_func=lambda r: WHOLE_DIR_TEXT if r == WHOLE_DIR else r,
        help="Sub-runs of the dump dir (folders that hold dump files)")
    _write_to_url(names, default)
    typed = right.text_area("Extra run dirs (one per line)", key="extra", bind="query-params",
                            height=68, help="Other dump dirs to compare; with --root, only "
                                            "dirs inside it")
    return names, _extra_dirs(typed)


def _seed_from_url(options: list[str], default: list[str]) -> None:
    """Set the chooser from the URL's tokens on a first visit, a link, Back or Forward
    (state.url_changed), or runs of another dump dir; tokens the dir does not hold are
    dropped (as a bound widget drops them)."""
    if not state.url_changed(RUNS) and set(st.session_state[RUNS]) <= set(options):
        return
    url = state.url_values(RUNS)
    tokens = [WHOLE_DIR if t == WHOLE_DIR_TEXT else t for t in (url or ())]
    known = [t for t in dict.fromkeys(tokens) if t in options][:MAX_RUNS]
    st.session_state[RUNS] = default if url is None else known


def _write_to_url(names: list[str], default: list[str]) -> None:
    """The chosen runs' tokens into the URL (none when they are the default; `runs=` for
    none chosen, which a link opens as none)."""
    state.write_url(RUNS, None if names == default else names or [""])


def _part(run: loaders.Run) -> loaders.Run:
    """The split the sidebar shows (train unless it says validation), trained samples only."""
    if run.has_validation:
        run = run.part(st.session_state.get(SPLIT) == "validation")
    return run.trained()


def choose_runs() -> list[Member]:
    """The runs the URL names, loaded (from their indexes) with labels and colours."""
    where = st.session_state.get(keys.LOADED)
    if where is None:
        return []
    base = where[0]
    names, extra = _chosen(base)
    # the dump dir itself is named by its path, as an extra dir is: its label is then its
    # folder's name ("gen"), not "."
    wanted = [(name if name != WHOLE_DIR else str(base), base / name, base, {
        "dir": str(base), "run": name}) for name in names]
    wanted += [(str(path), path, path, {"dir": str(path)}) for path in extra]
    typed = st.text_input("Labels (comma-separated, in run order)", key="labels",
                          bind="query-params", help="Short names for the legend; blank "
                                                    "keeps each run's folder name")
    labels = build.labels([name for name, *_ in wanted], typed)
    colours = build.colours([name for name, *_ in wanted])
    members = []
    for (name, path, home, params), label, colour in zip(wanted, labels, colours):
        run = compare_run(path, home)
        if run is not None:
            members.append(Member(name, label, colour, _part(run), params))
    return members


def forget_stale(key: str, options: Sequence[object]) -> None:
    """Drop a widget's kept value that is no longer among its options (another run set, step
    or prompt), so the widget falls back to its default instead of failing."""
    if key in st.session_state and st.session_state[key] not in options:
        del st.session_state[key]


def legend(members: list[Member]) -> None:
    """The runs as coloured chips with their label and step range (labels are escaped)."""
    chips = []
    for m in members:
        steps = m.run.steps
        span = f"steps {steps[0]}–{steps[-1]}" if steps else "no steps"
        chips.append(f'<span style="display:inline-block;margin:0 12px 4px 0">'
                     f'<span style="color:{m.colour};font-size:1.3em">■</span> '
                     f"<b>{html.escape(m.label)}</b> <small>{html.escape(m.name)} · "
                     f"{m.run.size:,} samples · {span}</small></span>")
    st.html("<div>" + "".join(chips) + "</div>")
