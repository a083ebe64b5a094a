"""The sidebar: which dump, which sub-run, which page and step, and display options."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

import loaders
from loaders import schema as S
from loaders.find.paths import resolve_dump_dir
from loaders.find.walk import dump_dirs
from pages import state
from pages.view import DisplayOptions

PAGES = {"rewards": "Rewards", "responses": "Responses", "sample": "Sample",
         "compare": "RL vs reference", "metrics": "Metrics", "health": "Health",
         "alerts": "Alerts"}
WHOLE_DIR = "."


@dataclass(frozen=True)
class BoardConfig:
    dump_dir: str
    root: str | None = None
    metrics: str = ""  # a second file or dir of training metrics


def choose_dir(config: BoardConfig) -> Path | None:
    """The dump dir box; None (with a message shown) when the path is refused or missing."""
    state.seed("w_dir", state.query("dir") or config.dump_dir)
    typed = st.sidebar.text_input("Dump dir", key="w_dir",
                                  help="Folder of *.jsonl rollout dumps (searched recursively)")
    path, error = resolve_dump_dir(typed, config.root)
    if error:
        st.error(error)
        return None
    state.publish(dir=typed)
    return path


def choose_run(base: Path) -> Path:
    """Sub-runs are dirs under the dump dir that directly hold dumps."""
    runs = dump_dirs(base)
    options = [WHOLE_DIR] + [r for r in runs if r != WHOLE_DIR]
    if len(options) == 1:
        return base
    wanted = state.query("run")
    state.seed("w_run", wanted if wanted in options else options[0])
    choice = st.sidebar.selectbox("Run", options, key="w_run",
                                  format_func=lambda r: "(everything under the dir)"
                                  if r == WHOLE_DIR else r)
    state.publish(run=None if choice == WHOLE_DIR else choice)
    return base if choice == WHOLE_DIR else base / choice


def choose_metrics_path(config: BoardConfig) -> str | None:
    """An optional second path holding the run's training metrics (logs, jsonl, events)."""
    state.seed("w_metrics_path", state.query("metrics") or config.metrics)
    typed = st.sidebar.text_input("Training metrics (optional)", key="w_metrics_path",
                                  help="A file or dir of training logs, if they are not "
                                       "inside the dump dir")
    if not typed.strip():
        state.publish(metrics=None)
        return None
    path, error = resolve_dump_dir(typed, config.root, allow_file=True)
    if error:
        st.sidebar.error(error)
        return None
    state.publish(metrics=typed)
    return str(path)


def choose_page() -> str:
    wanted = state.query("page")
    state.seed("w_page", wanted if wanted in PAGES else "rewards")
    page = st.sidebar.radio("Page", list(PAGES), key="w_page", format_func=PAGES.get)
    state.publish(page=page)
    return page


def choose_split(run: loaders.Run) -> loaders.Run:
    """Training or validation samples, when the dump holds both (they are never mixed)."""
    if not run.has_validation:
        return run
    splits = {"train": False, "validation": True}
    wanted = state.query("split")
    state.seed("w_split", wanted if wanted in splits else "train")
    split = st.sidebar.radio("Samples", list(splits), key="w_split", horizontal=True)
    state.publish(split=split)
    return run.part(splits[split])


def choose_step(steps: list[int]) -> int:
    """The step every page looks at, shared through the URL."""
    wanted = state.query("step")
    default = int(wanted) if wanted and re.fullmatch(r"-?[0-9]+", wanted) else steps[-1]
    state.seed("w_step", default if default in steps else steps[-1])
    if st.session_state["w_step"] not in steps:
        st.session_state["w_step"] = steps[-1]
    if len(steps) == 1:
        step = steps[0]
        st.sidebar.caption(f"Step {step} (the only one)")
    else:
        step = st.sidebar.select_slider("Step", options=steps, key="w_step")
    state.publish(step=step)
    return step


def display_options(config: BoardConfig) -> DisplayOptions:
    """Pad token, system-prompt marker, KL estimator and an optional tokenizer dir."""
    defaults = DisplayOptions()
    with st.sidebar.expander("Display options"):
        pad = st.text_input("Pad token to strip", value=defaults.pad_token, key="w_pad")
        marker = st.text_input("System prompt ends at", value=defaults.system_marker,
                               key="w_marker")
        estimator = st.selectbox("KL estimator", S.KL_ESTIMATORS, key="w_kl",
                                 index=S.KL_ESTIMATORS.index(defaults.kl_estimator),
                                 format_func=S.KL_LABELS.get)
        tokenizer = st.text_input("Tokenizer dir (decode token ids)", key="w_tokenizer",
                                  help="A local Hugging Face tokenizer folder; needs the "
                                       "optional transformers package. Nothing is downloaded.")
    tokenizer_dir = ""
    if tokenizer.strip():
        path, error = resolve_dump_dir(tokenizer, config.root)
        if error:
            st.sidebar.error(f"Tokenizer dir: {error}")
        else:
            tokenizer_dir = str(path)
    return DisplayOptions(pad, marker, estimator, tokenizer_dir)
