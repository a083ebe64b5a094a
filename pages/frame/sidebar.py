"""The sidebar: which dump, which sub-run, which page and step (the display options are
pages.frame.display_options)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st
from streamlit.errors import StreamlitAPIException

import loaders
from loaders import schema as S
from loaders.find.paths import resolve_dump_dir
from loaders.find.reach import RemoteReach
from loaders.find.remote import is_url
from pages.figures.text import literal
from pages.frame import state
from pages.frame.keys import DIR, METRICS, PAGES, RUN, SAMPLE, SPLIT, STEP
from pages.frame.loading import refresh, sub_run_formats, sub_runs

WHOLE_DIR = "."


@dataclass(frozen=True)
class BoardConfig:
    dump_dir: str
    root: str | None = None
    metrics: str = ""  # a second file or dir of training metrics
    group_key: str = ""  # --group-key: the key that names a sample's GRPO group
    allow_remote: tuple[str, ...] = ()  # --allow-remote: URL prefixes a link may name

    def reach(self) -> RemoteReach:
        """The URLs a link or the sidebar may open: the operator's own dump dir and metrics
        path, and object-store URLs under those, the URL root or an --allow-remote prefix."""
        return RemoteReach.of((self.dump_dir, self.metrics),
                              (self.dump_dir, *self.allow_remote))


def named_dir(config: BoardConfig) -> Path | None:
    """The dump dir as the user named it: absolute, its links not resolved (no disk access).
    Following checks by it that a link was not swapped to another run (pages.frame.live)."""
    typed = str(st.session_state.get(DIR, config.dump_dir) or "").strip()
    if not typed or is_url(typed) or (config.root is not None and is_url(config.root)):
        return None
    path = Path(typed).expanduser()
    if config.root is not None and not path.is_absolute():
        return Path(config.root).expanduser().absolute() / path
    return path.absolute()


def choose_dir(config: BoardConfig) -> Path | None:
    """The dump dir box; None (with a message shown) when the path is refused or missing."""
    typed = st.sidebar.text_input("Dump dir", value=config.dump_dir, key=DIR,
                                  bind="query-params",
                                  help="Folder of *.jsonl rollout dumps (searched recursively)")
    path, error = resolve_dump_dir(typed, config.root, reach=config.reach())
    if error:
        st.error(literal(error))
        return None
    if st.sidebar.button("Refresh", key="refresh", icon=":material/refresh:",
                         help="Read the dir again: new files, appended lines, metric logs, "
                              "alerts.toml. Until then the board shows what it read."):
        refresh(path)
    return path


def choose_run(base: Path) -> Path | None:
    """Sub-runs are dirs under the dump dir that directly hold dumps.  When they are in
    different formats (different trainers, so different runs) the first one opens, not all
    of them as one curve; a `run=` the dir does not hold is an error, never a fall-back."""
    runs = sub_runs(base)
    options = [WHOLE_DIR] + [r for r in runs if r != WHOLE_DIR]
    wanted = st.query_params.get("run")
    if wanted is not None and wanted not in options and wanted != _label(WHOLE_DIR):
        st.error(literal(f"No sub-run {wanted!r} under {base}; pick one in the sidebar."))
        st.query_params.pop("run", None)
        return None
    if len(options) == 1:
        return base
    mixed = len({fmt for fmt in sub_run_formats(base).values() if fmt}) > 1
    choice = st.sidebar.selectbox("Run", options, key=RUN, bind="query-params",
                                  index=1 if mixed else 0, format_func=_label)
    if mixed and choice == options[1]:
        st.sidebar.caption(f"{len(options) - 1} sub-runs in different formats: showing the "
                           "first; pick another (or all of them) above.")
    elif choice == WHOLE_DIR and len(runs) > 1:  # an ablation's folder: its runs as one
        st.sidebar.caption(f"{len(runs)} sub-runs shown as one run (their samples merged "
                           "step by step): pick one above, or set them side by side on "
                           "Compare runs.")
    return base if choice == WHOLE_DIR else base / choice


def _label(run: str) -> str:
    return "(everything under the dir)" if run == WHOLE_DIR else run


def choose_metrics_path(config: BoardConfig) -> str | None:
    """An optional second path holding the run's training metrics (logs, jsonl, events)."""
    typed = st.sidebar.text_input("Training metrics (optional)", value=config.metrics,
                                  key=METRICS, bind="query-params",
                                  help="A file or dir of training logs, if they are not "
                                       "inside the dump dir")
    if not typed.strip():
        return None
    path, error = resolve_dump_dir(typed, config.root, allow_file=True,
                                   reach=config.reach())
    if error:
        st.sidebar.error(literal(error))
        return None
    return str(path)


def choose_split(run: loaders.Run) -> loaders.Run:
    """Training or validation samples, when the dump holds both (they are never mixed)."""
    if not run.has_validation:
        return run
    splits = {"train": False, "validation": True}
    split = st.sidebar.radio("Samples", list(splits), key=SPLIT, horizontal=True,
                             bind="query-params")
    return run.part(splits[split])


def step_of_linked_sample(run: loaders.Run) -> None:
    """A link naming a sample and no step (the board leaves the newest step out of its
    links, and a live run then moves past it) opens at the sample's own step: written into
    the URL before the step slider reads it, so the URL says the step shown (a value set
    after the slider is drawn never reaches the URL on a session's first run)."""
    if STEP in st.query_params or SAMPLE not in st.query_params or STEP in st.session_state:
        return
    step = run.store.step_of(st.query_params[SAMPLE])
    if step is not None and step in run.steps and step != run.steps[-1]:
        # the sample's page again with the step in its URL (set here, it would not stay)
        try:
            st.switch_page(st.session_state[PAGES]["sample"],
                           query_params={**state.params(), STEP: str(step)})
        except StreamlitAPIException:  # a parameter a drawn widget owns (a link's dump
            return  # dir): the Sample page moves to the step itself, its link without it


def choose_step(steps: list[int]) -> int:
    """The step every page looks at, shared through the URL (the newest by default)."""
    if st.session_state.get(STEP) not in (None, *steps):
        del st.session_state[STEP]  # another run or split: its steps differ
    _unknown_step(steps)
    if len(steps) == 1:
        st.sidebar.caption(f"Step {steps[0]} (the only one)")
        return steps[0]
    return st.sidebar.select_slider("Step", options=steps, value=steps[-1], key=STEP,
                                    bind="query-params")


def _unknown_step(steps: list[int]) -> None:
    """A link's step that is none of the run's (`step=abc`, a step not dumped yet) is said,
    not dropped in silence: the slider then shows the newest."""
    asked = st.query_params.get(STEP)
    if asked is None or STEP in st.session_state or asked in map(str, steps):
        return
    st.sidebar.caption(literal(f"The link's step {asked[:40]} is not one of this run's "
                               f"steps ({steps[0]}–{steps[-1]}): step {steps[-1]} is shown."))


def choose_left_out(run: loaders.Run) -> bool:
    """Show the samples the trainer did not train on (filtered, aborted, errored)?  They
    are counted here, shown in the tables on request, and never in a statistic."""
    count = 0 if run.left_out is None else run.left_out.size
    if not count:
        return False
    reasons = run.left_out.read([S.EXCLUDED_BY])[S.EXCLUDED_BY].value_counts()
    noun = "sample" if count == 1 else "samples"
    st.sidebar.caption(f"{count:,} {noun} left out of training: " + literal(
        ", ".join(f"{reason} {n}" for reason, n in reasons.items())))
    return st.sidebar.toggle("Show left-out samples in tables", key="left_out",
                             bind="query-params")
