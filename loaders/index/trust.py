"""Checking an index read from disk before any of it is used.

Whoever can write the dump dir (or the user cache dir) can plant an index, and the file
paths in it are opened later to read samples back.  So every path must be a plain relative
path that stays inside the dump dir, every sample row must belong to a dump file of the index
and carry the key its file, line and item give, and the metadata must have exactly the shape
this version writes.  Anything else raises Untrusted, and the index is rebuilt.
"""
from __future__ import annotations

import os
import stat as st
from collections.abc import Iterable
from dataclasses import fields
from pathlib import Path

import pandas as pd

from loaders import schema as S
from loaders.find.kind import METRICS, UNKNOWN
from loaders.formats import BY_NAME

_KNOWN_FORMATS = frozenset(BY_NAME) | {METRICS, UNKNOWN}
_TYPES = {"str": str, "int": int, "bool": bool}
_PROBLEM = {"file": str, "line": int, "reason": str, "dropped": bool}
_SHOWN = 80
_NONE = object()
_NAMES = frozenset({"", ".", ".."})  # a part of a path that is not a plain name


class Untrusted(ValueError):
    """Why a stored index is not used; the message completes "index ignored: …"."""


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"


def typed_fields(entry: object, types: dict[str, type], what: str) -> dict:
    """entry when it is a dict with exactly these keys, each of its type; raises Untrusted."""
    if not isinstance(entry, dict) or entry.keys() != types.keys():
        keys = sorted(map(str, entry)) if isinstance(entry, dict) else type(entry).__name__
        raise Untrusted(f"malformed {what}: {_shown(keys)}")
    for key, kind in types.items():
        if type(entry[key]) is not kind:  # `is`: True is not an int here
            raise Untrusted(f"malformed {what}: {key} = {_shown(entry[key])}")
    return entry


def state_types(state_class: type) -> dict[str, type]:
    """{field: type} of a dataclass whose fields are all str, int or bool."""
    return {f.name: _TYPES[str(f.type)] for f in fields(state_class)}


def checked_states(columns: object, state_class: type) -> dict[str, object]:
    """The file states by path, from {field: [value per file]}, each checked (shape, types,
    format, a path that stays inside the dump dir)."""
    types = state_types(state_class)
    if not isinstance(columns, dict) or columns.keys() != types.keys():
        raise Untrusted(f"malformed file list: {_shown(columns)}")
    lengths = {len(v) if isinstance(v, list) else -1 for v in columns.values()}
    if len(lengths) != 1 or -1 in lengths:
        raise Untrusted("malformed file list: columns of different lengths")
    for name, kind in types.items():
        wrong = next((v for v in columns[name] if type(v) is not kind), _NONE)  # True: no int
        if wrong is not _NONE:
            raise Untrusted(f"malformed file entry: {name} = {_shown(wrong)}")
    states = {}
    for values in zip(*(columns[name] for name in types)):
        state = state_class(*values)
        relative_path(state.rel)
        if state.format not in _KNOWN_FORMATS:
            raise Untrusted(f"unknown format {_shown(state.format)} for {_shown(state.rel)}")
        if state.rel in states:
            raise Untrusted(f"{_shown(state.rel)} listed twice")
        states[state.rel] = state
    return states


def checked_problems(entries: object) -> list[dict]:
    if not isinstance(entries, list):
        raise Untrusted(f"malformed problem list: {type(entries).__name__}")
    return [typed_fields(entry, _PROBLEM, "problem") for entry in entries]


def relative_path(rel: str) -> None:
    """Raises Untrusted unless rel is a normalised relative path with no `..` (string
    checks, not PurePosixPath: this runs once per file of the dump on every reopen)."""
    if (not rel or "\x00" in rel or rel.startswith("/")
            or not _NAMES.isdisjoint(rel.split("/"))):
        raise Untrusted(f"a file path leads outside the dump dir: {_shown(rel)}")


def check_inside(root: Path, rels: list[str]) -> None:
    """Each path, resolved (its dirs, and the file where it is a link), stays inside root."""
    if not isinstance(root, Path):  # a URL: no links, so relative without `.`/`..` will do
        for rel in rels:
            if rel.startswith("/") or {".", "..", ""} & set(rel.split("/")):
                raise Untrusted(f"a file path leads outside the dump dir: {_shown(rel)}")
        return
    real_root = os.path.realpath(root)
    for rel in sorted({rel.rpartition("/")[0] for rel in rels} - {""}):
        _resolves_inside(real_root, os.path.join(real_root, rel), rel)
    for rel in rels:
        path = os.path.join(real_root, rel)
        try:
            link = st.S_ISLNK(os.lstat(path).st_mode)
        except OSError:
            continue  # gone: the refresh notices, and nothing is read from it
        if link:
            _resolves_inside(real_root, path, rel)


def _resolves_inside(real_root: str, path: str, rel: str) -> None:
    try:
        real = os.path.realpath(path, strict=False)
    except (OSError, RuntimeError):
        raise Untrusted(f"{_shown(rel)} cannot be resolved") from None
    if real != real_root and not real.startswith(real_root.rstrip("/") + "/"):
        raise Untrusted(f"a file path leads outside the dump dir: {_shown(rel)}")


def check_frame(frame: pd.DataFrame, dump_files: set[str]) -> None:
    """Every schema column with its dtype, extras numeric or text, rows of the dump files
    listed with their own keys, and no negative place in a file."""
    check_types(frame)
    files = frame[S.FILE].cat.categories if len(frame) else []
    places = {name: frame[name].min() for name in (S.LINE, S.OFFSET, S.NBYTES, S.ITEM)
              if len(frame) and name in frame.columns}
    check_rows(files, places, dump_files)


def check_types(frame: pd.DataFrame) -> None:
    """Every schema column with its dtype, extras numeric or text (a frame of some rows of
    an index: a Parquet file has one type a column)."""
    for name, dtype in S.SUMMARY_DTYPES.items():
        if name in S.READ_BY_ROW and name not in frame.columns:  # left in the file, read by
            continue  # row: ondisk checks their type there
        if name not in frame.columns or not _has_dtype(frame[name], dtype):
            raise Untrusted(f"column {name!r} missing or not {dtype}")
    for name in frame.columns.difference(list(S.SUMMARY_DTYPES)):
        # numeric of any width (text of digits becomes int64) or text, as table.typed makes
        column = frame[name]
        if not (_has_dtype(column, "string") or pd.api.types.is_numeric_dtype(column.dtype)):
            raise Untrusted(f"column {_shown(name)} is {column.dtype}")


def check_rows(files: Iterable[str], least: dict[str, int], dump_files: set[str]) -> None:
    """Rows only of the dump files listed (`files`: the index's file names), and no
    negative place in a file (`least`: the smallest value of each place column)."""
    stray = [f for f in files if f not in dump_files]
    if stray:
        raise Untrusted(f"samples of a file it does not index: {_shown(stray[0])}")
    for name, value in least.items():
        if value is not None and value < 0:
            raise Untrusted(f"negative {name}")


def has_dtype(column: pd.Series, dtype: str) -> bool:
    """column has the schema's dtype `dtype` (a category of text for \"category\")."""
    return _has_dtype(column, dtype)


def _has_dtype(column: pd.Series, dtype: str) -> bool:
    if dtype == "category":
        return isinstance(column.dtype, pd.CategoricalDtype) and (
            column.cat.categories.empty or pd.api.types.is_string_dtype(column.cat.categories))
    if dtype == "string":
        return isinstance(column.dtype, pd.StringDtype)
    return str(column.dtype) == dtype
