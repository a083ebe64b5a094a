"""Summary rows -> the typed, sorted per-sample frame."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from loaders import schema as S
from loaders.index.parts import Part, part_of, sorted_parts
from loaders.index.summary import extra_column

FILLS = {"int64": 0, "int32": -1, "bool": False, "float64": np.nan, "string": "",
         "category": "", "object": None}  # what typed() fills a missing value with
# explicit truncation signals some trainers write, besides hitting the length cap
_TRUNCATION_FLAGS = tuple(extra_column(k) for k in ("truncated", "is_truncated"))
# the fields that say how a sample ended, and their values that mean it was cut off
_ENDINGS = {**dict.fromkeys(("finish_reason", "stop_reason", S.LAST_FINISH), ("length",)),
            **dict.fromkeys(("status", "rollout_status"), ("truncated", "length"))}
TRUNCATION_FIELDS = (*_TRUNCATION_FLAGS, *_ENDINGS)  # what can say a sample was cut


def empty_frame() -> pd.DataFrame:
    """A frame with every schema column and no rows."""
    return typed(pd.DataFrame({name: pd.Series([], dtype="object") for name in S.SUMMARY_DTYPES}))


_NO_MISSING = ("int64", "int32", "bool", "float64")  # dtypes whose columns hold no None


def typed(frame: pd.DataFrame, absent: frozenset[str] = frozenset()) -> pd.DataFrame:
    """Every schema column present with its dtype (but those named `absent`); extra
    columns numeric or string."""
    for name, dtype in S.SUMMARY_DTYPES.items():
        if name in absent:
            continue
        if name not in frame.columns:
            frame[name] = FILLS[dtype]
        elif dtype in _NO_MISSING and frame[name].dtype == dtype:
            continue  # typed already (Arrow's ints, flags and floats): no copy of the column
        elif dtype in ("int64", "int32", "bool"):
            frame[name] = frame[name].fillna(FILLS[dtype])
        elif dtype == "object":  # bytes or None, never the NaN a concat fills in
            if frame[name].dtype == object:
                continue  # Arrow's (binary, or all null): its nulls came as None
            frame[name] = frame[name].astype(object).where(frame[name].notna(), None)
        frame[name] = frame[name].astype(dtype)
    for name in frame.columns.difference(list(S.SUMMARY_DTYPES)):
        if frame[name].dtype == object or pd.api.types.is_string_dtype(frame[name]):
            frame[name] = _numbers_or_text(frame[name])
    return frame


def _numbers_or_text(column: pd.Series) -> pd.Series:
    """An extra column as numbers when every value it has reads as one, else as text.  Its
    first values are tried alone first: an id or a label fails there, without a pass over a
    million rows."""
    known = column.dropna()
    head = pd.to_numeric(known.iloc[:64], errors="coerce")
    if head.notna().all():
        numeric = pd.to_numeric(column, errors="coerce")
        if numeric[column.notna()].notna().all():
            return numeric
    return column.astype("string")


def combine(parts: list[Part | pd.DataFrame]) -> pd.DataFrame:
    """Concatenate, sort by (step, rank, file, line, item), type and derive run-level
    flags.  The parts meet and sort as Arrow tables: the run becomes a frame once.  Empties
    `parts` (they are let go as the run is made)."""
    table = sorted_table(parts)
    return empty_frame() if table is None else framed(table)


def sorted_table(parts: list[Part | pd.DataFrame], decoded: frozenset[str] | None = None
                 ) -> pa.Table | None:
    """The parts as one sorted table (None without rows), the schema's coded texts made
    text but those left out of `decoded` (all, by default); empties `parts`."""
    tables = [p if isinstance(p, pa.Table) else part_of(p) for p in parts if len(p)]
    parts.clear()  # the caller's list: its parts go once they are sorted
    if not tables:
        return None
    return _ints_filled(sorted_parts(tables, DECODED if decoded is None else decoded))


def framed(table: pa.Table, absent: frozenset[str] = frozenset()) -> pd.DataFrame:
    """A sorted table as the run's typed frame, with its run-level flags; the schema's
    columns named in `absent` are left out (typed adds every other)."""
    # a block a column: no consolidating copy of the run (a wide run's many blocks are only
    # slower to add a column to, which pandas warns of); not self_destruct, which frees only
    # the few columns pandas copies (flags, digests: the long run's peak 10 MB lower) at
    # twice the conversion's time (45 against 16 ms)
    frame = table.to_pandas(split_blocks=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pd.errors.PerformanceWarning)
        frame[S.FILE] = _file_names(frame[S.FILE])
        frame = typed(frame, absent)
        frame[S.TRUNCATED], frame[S.TRUNCATION_INFERRED] = truncated(frame)
        frame[S.NONFINITE] = frame[S.NAN_COUNT] > 0
    return frame


_WHOLE = {"int64": pa.int64(), "int32": pa.int32(), "bool": pa.bool_()}
# the schema's text columns, which come as codes where few texts repeat (a prompt preview, a
# finish reason): made text as they are sorted, or pandas makes a str of each value (the file
# names stay codes, sorted by their ranks: pandas' categories, _file_names)
DECODED = frozenset(name for name, kind in S.SUMMARY_DTYPES.items() if kind == "string")


def _file_names(column: pd.Series) -> pd.Series:
    """The file names as typed() makes them, categories sorted by name: from Arrow's codes
    (a remap of a few names) where they came coded, not from a million texts (pandas
    factorizes them in 0.05 s, and made text of categories in 0.2 s).  The codes are remapped
    in numpy: pandas' remove, reorder and rename of categories each pass every row (25-70
    ms on the long run, against 5)."""
    if not isinstance(column.dtype, pd.CategoricalDtype):
        return column.astype("string")
    codes = column.cat.codes.to_numpy()
    categories = column.cat.categories
    used = np.flatnonzero(np.bincount(codes[codes >= 0] if column.hasnans else codes,
                                      minlength=len(categories)))
    names = sorted(categories[used])
    remap = np.full(len(categories) + 1, -1, dtype=np.int64)  # the last: a null's -1
    at = {name: i for i, name in enumerate(names)}
    remap[used] = [at[name] for name in categories[used]]
    kind = pd.CategoricalDtype(pd.Index(names, dtype="string"))  # as astype("category")
    return pd.Series(pd.Categorical.from_codes(remap[codes], dtype=kind),  # of texts names it
                     index=column.index, name=column.name)


def _ints_filled(table: pa.Table) -> pa.Table:
    """The schema's integer and flag columns with their fill (typed's) where a part had no
    value, in Arrow: pandas makes an integer column with a null float64, which rounds a
    64-bit line check (a followed run's new rows beside held rows without that column)."""
    for at, field in enumerate(table.schema):
        kind = S.SUMMARY_DTYPES.get(field.name)
        if kind in _WHOLE and field.type == _WHOLE[kind] and table.column(at).null_count:
            table = table.set_column(at, field.name, pc.fill_null(table.column(at),
                                                                  FILLS[kind]))
    return table


def truncated(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """truncated_at the frame's own length cap (its rows are the run's)."""
    return truncated_at(frame, length_cap(frame))


def truncated_at(frame: pd.DataFrame, cap: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Which responses were cut off, and which of those flags are inferred.

    The dump's word decides where it gives one: a truncated/is_truncated flag, a finish or
    stop reason ("length" is a cut), a status (slime's "truncated"; "completed" is not).
    Only a sample with none of them is inferred: truncated when its token count equals the
    run's longest and at least two samples share that length, which is what a generation
    cap looks like.
    """
    flags = np.zeros(len(frame), dtype=bool)
    known = np.zeros(len(frame), dtype=bool)
    for name in _TRUNCATION_FLAGS:
        if name in frame.columns:
            values = pd.to_numeric(frame[name], errors="coerce")
            flags |= values.fillna(0).to_numpy() > 0
            known |= values.notna().to_numpy()
    for name, cut in _ENDINGS.items():
        if name in frame.columns and holds_text(frame[name]):
            said = frame[name].astype("string").str.lower()
            flags |= said.isin(cut).fillna(False).to_numpy(dtype=bool)
            known |= (said.fillna("") != "").to_numpy(dtype=bool)
    inferred = np.zeros(len(frame), dtype=bool)
    if cap is not None:
        inferred = ~known & (frame[S.RESPONSE_LEN].to_numpy() == cap) & cappable(frame)
    return flags | inferred, inferred


def holds_text(column: pd.Series) -> bool:
    """Whether a column has a value that is not empty text: where pandas keeps its texts in
    Arrow, from their byte lengths (a finish reason no trainer line gave is a million empty
    texts, not worth a lowercase and a compare each); any other column, True."""
    if not isinstance(column.dtype, pd.StringDtype) or column.dtype.storage != "pyarrow":
        return True
    return bool(pc.sum(pc.binary_length(pa.array(column.array))).as_py() or 0)


def length_cap(frame: pd.DataFrame) -> int | None:
    """The generation cap the run's lengths show: its longest response, when two or more
    samples share it; None when they show none.  A run-level fact: a growth that moves it
    changes the inferred truncation of rows it did not touch."""
    return cap_of(frame[S.RESPONSE_LEN].to_numpy()[cappable(frame)])


def cap_of(lengths: np.ndarray) -> int | None:
    """length_cap of these (cappable) response lengths."""
    if not lengths.size or lengths.max() <= 0:
        return None
    longest = lengths.max()
    return int(longest) if (lengths == longest).sum() >= 2 else None


def cappable(frame: pd.DataFrame) -> np.ndarray:
    # a multi-turn sample's length counts its trained tokens, not the sequence a cap cuts
    if S.TRAINED_SHARE in frame:
        return ~(frame[S.TRAINED_SHARE] < 1).to_numpy()
    return np.ones(len(frame), dtype=bool)
