"""The sidebar's display options: pad token, system-prompt marker, KL estimator, tokenizer
dir, and how groups get advantages and passes.

Their six widgets are drawn only while their expander is open: drawn closed, they cost every
page's first paint 0.24 s of the browser's main thread (docs/benchmarks.md, session 21) for
options most visits never change.  A widget Streamlit binds to the URL loses its parameter
once it is not drawn, so these are not bound: the session keeps the options, read from the
URL on its first run (a copied link); a change writes its parameter (the widget's callback,
before the page is drawn), and a run whose URL lost one (a jump between pages) writes it
back, so a copied link carries them.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypedDict

import streamlit as st

from loaders import schema as S
from loaders.find.paths import resolve_dump_dir
from loaders.find.remote import is_url
from loaders.groups.advantage import LABELS, MODES
from pages.figures.text import literal
from pages.frame.view import DisplayOptions

CHOSEN = "_display_options"  # session: the options by URL parameter
OPEN = "opts"  # the expander's key and URL parameter ("true" while open)
Value = str | float
_BASE = DisplayOptions()
DEFAULTS: dict[str, Value] = {"pad": _BASE.pad_token, "marker": _BASE.system_marker,
                              "kl": _BASE.kl_estimator, "tokenizer": "",
                              "adv": _BASE.advantage, "pass": _BASE.pass_threshold}
_CHOICES = {"kl": S.KL_ESTIMATORS, "adv": MODES}


def from_params(params: Mapping[str, str]) -> dict[str, Value]:
    """The options a URL names; the default for one it leaves out or names wrongly (an
    estimator or advantage mode there is none of, a threshold that is no finite number)."""
    chosen = dict(DEFAULTS)
    for name in ("pad", "marker", "tokenizer"):
        if name in params:
            chosen[name] = str(params[name])
    for name, allowed in _CHOICES.items():
        if params.get(name) in allowed:
            chosen[name] = params[name]
    try:
        threshold = float(params.get("pass", "nan"))
    except ValueError:
        threshold = math.nan
    if math.isfinite(threshold):
        chosen["pass"] = threshold
    return chosen


def missing_params(chosen: Mapping[str, Value], params: Mapping[str, str]) -> dict[str, str]:
    """The URL parameters a link of these options needs and `params` lacks or differs on."""
    wanted = {name: _param(value) for name, value in chosen.items() if value != DEFAULTS[name]}
    return {name: text for name, text in wanted.items() if params.get(name) != text}


def _param(value: Value) -> str:
    return str(value)  # a float's shortest text that reads back as the same float


def display_options(root: str | None, group_key: str, show_left_out: bool) -> DisplayOptions:
    """The options for this run, the widgets drawn when their expander is open."""
    chosen = st.session_state.setdefault(CHOSEN, from_params(st.query_params))
    st.query_params.update(missing_params(chosen, st.query_params))
    box = st.sidebar.expander("Display options", key=OPEN, on_change="rerun",
                              bind="query-params")
    if box.open:
        with box:
            _widgets(chosen)
    return DisplayOptions(str(chosen["pad"]), str(chosen["marker"]), str(chosen["kl"]),
                          _tokenizer_dir(str(chosen["tokenizer"]), root), str(chosen["adv"]),
                          float(chosen["pass"]), show_left_out, group_key)


def _widgets(chosen: Mapping[str, Value]) -> None:
    """The six widgets, each starting at the session's value; a change goes to the session
    and the URL (_changed)."""
    st.text_input("Pad token to strip", value=str(chosen["pad"]), **_kept("pad"))
    st.text_input("System prompt ends at", value=str(chosen["marker"]), **_kept("marker"))
    st.selectbox("KL estimator", S.KL_ESTIMATORS, index=S.KL_ESTIMATORS.index(chosen["kl"]),
                 help="\n\n".join(S.KL_LABELS[k] for k in S.KL_ESTIMATORS), **_kept("kl"))
    st.text_input("Tokenizer dir (decode token ids)", value=str(chosen["tokenizer"]),
                  help="A local Hugging Face tokenizer folder; needs the optional "
                       "transformers package. Nothing is downloaded.", **_kept("tokenizer"))
    st.selectbox("Advantage (when the dump has none)", MODES,
                 index=MODES.index(chosen["adv"]),
                 help="Group-relative advantage derived from the group's rewards: "
                      + "; ".join(LABELS.values())
                      + ". A trainer's own advantage key always wins.", **_kept("adv"))
    st.number_input("Pass: reward ≥", value=float(chosen["pass"]), step=0.1,
                    help="A sample passes when its reward reaches this; a correctness key "
                         "the trainer logged (acc, correct) wins.", **_kept("pass"))


def widget_key(name: str) -> str:
    return f"opt_{name}"  # not the URL parameter's name: that one is this module's to write


class _Kept(TypedDict):
    key: str
    on_change: Callable[[str], None]
    args: tuple[str]


def _kept(name: str) -> _Kept:
    return {"key": widget_key(name), "on_change": _changed, "args": (name,)}


def _changed(name: str) -> None:
    value = st.session_state[widget_key(name)]
    st.session_state[CHOSEN][name] = value
    if value == DEFAULTS[name]:
        st.query_params.pop(name, None)
    else:
        st.query_params[name] = _param(value)


def _tokenizer_dir(typed: str, root: str | None) -> str:
    """The tokenizer dir as a path under --root; "" (with a message) for none or a refused
    one. A URL (or a name under a URL root) is refused before it is looked up: transformers
    reads a tokenizer from a local folder only."""
    if not typed.strip():
        return ""
    path: Path | None
    if is_url(typed.strip()) or (root is not None and is_url(root)):
        path, error = None, f"a tokenizer is read from a local folder, not {typed.strip()}"
    else:
        path, error = resolve_dump_dir(typed, root)
    if error:
        st.sidebar.error(f"Tokenizer dir: {literal(error)}")
        return ""
    return str(path)
