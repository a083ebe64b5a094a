"""What a user found, taken away: a table as CSV or Parquet, and samples as JSONL lines.

A table export holds every column of its rows with the full texts (not the previews) and
each row's `key` (file:line).  A JSONL export holds each sample's own line, byte for byte as
the trainer wrote it (checked against the line's CRC in the index), so it is a dump of the
same format that the board, or the trainer's own tools, read back; a line holding several
samples is written once.  Samples of tabular files (Parquet) and lines changed since
indexing are written as the board read them (texts and scalars), marked `"exported": "board"`.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

import orjson
import pandas as pd

from loaders import schema as S
from loaders.formats import BY_NAME
from loaders.parse.record import line_check
from loaders.serve.run import Run

MAX_ROWS = 2000  # rows a full-text export holds: 2,000 answers of 32k tokens is ~200 MB
_TEXTS = (S.PROMPT, S.RESPONSE, S.REF_RESPONSE, S.GROUND_TRUTH)
# what makes a spreadsheet read a cell as a formula (OWASP's list for CSV injection)
_FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")


def full_table(run: Run, rows: pd.DataFrame) -> pd.DataFrame:
    """rows (at most MAX_ROWS) with their text columns holding the full texts."""
    rows = run.with_previews(rows.head(MAX_ROWS)).copy()
    texts = run.texts(rows[S.KEY].tolist())
    for column in _TEXTS:
        full = [texts[key][column] if key in texts else None for key in rows[S.KEY]]
        rows[column] = pd.Series(full, index=rows.index, dtype="string").fillna(rows[column])
    return rows


def table_bytes(frame: pd.DataFrame, fmt: str) -> bytes:
    """frame as CSV (UTF-8) or Parquet (zstd) bytes."""
    frame = frame.reset_index(drop=True)
    if fmt == "csv":
        # every text cell quoted: a lone \r in a text ends a record for most readers unless
        # it is; numbers are left unquoted, so they read back as numbers
        return csv_safe(frame).to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC).encode(
            "utf-8", "surrogatepass")
    if fmt == "parquet":
        out = io.BytesIO()
        frame.to_parquet(out, index=False, compression="zstd")
        return out.getvalue()
    raise ValueError(f"unknown export format {fmt!r}: csv or parquet")


def csv_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """frame with each text cell and header that a spreadsheet would run as a formula
    (its first character one of _FORMULA_LEADS) behind an apostrophe, which a spreadsheet
    shows as text.  Numeric columns are left alone: -0.5 there is a number, not a formula."""
    safe = frame.copy(deep=False)
    for column in frame.columns:
        values = frame[column]
        if isinstance(values.dtype, pd.CategoricalDtype):
            values = values.astype(object)
        if pd.api.types.is_string_dtype(values) and values.dtype != object:
            risky = values.str.startswith(_FORMULA_LEADS).fillna(False).astype(bool)
            safe[column] = values.mask(risky, "'" + values)
        elif values.dtype == object:  # mixed cells (bytes, lists): only the texts change
            safe[column] = values.map(_safe_cell)
    safe.columns = [f"'{c}" if str(c).startswith(_FORMULA_LEADS) else c
                    for c in frame.columns]
    return safe


def _safe_cell(value: object) -> object:
    return f"'{value}" if isinstance(value, str) and value.startswith(_FORMULA_LEADS) else value


def jsonl_bytes(run: Run, rows: pd.DataFrame) -> bytes:
    """The samples of rows (at most MAX_ROWS) as JSONL, each its own line as written."""
    rows = run.with_previews(rows.head(MAX_ROWS))  # where each line is, and their keys
    lines: list[bytes] = []
    seen: set[tuple[str, int]] = set()
    by_board: list[str] = []
    for row in rows[[S.KEY, S.FILE, S.OFFSET, S.NBYTES, S.LINE_CHECK]].itertuples(index=False):
        key, file, offset, nbytes, check = row
        if (file, offset) in seen:
            continue
        seen.add((file, offset))
        raw = None if _tabular(run, file) else _line(run.root / file, offset, nbytes, check)
        if raw is None:
            by_board.append(key)
        else:
            lines.append(raw + b"\n")
    lines += _board_lines(run, rows, by_board)
    return b"".join(lines)


def _tabular(run: Run, file: str) -> bool:
    fmt = run.files[file].format if file in run.files else "native"
    return fmt in BY_NAME and BY_NAME[fmt].tabular or fmt not in BY_NAME


def _line(path: Path, offset: int, nbytes: int, check: int) -> bytes | None:
    """The line's bytes when they still are what was indexed, else None."""
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            raw = handle.read(nbytes)
    except OSError:
        return None
    return raw if len(raw) == nbytes and line_check(raw) == check else None


def _board_lines(run: Run, rows: pd.DataFrame, keys: list[str]) -> list[bytes]:
    if not keys:
        return []
    texts = run.texts(keys)
    picked = rows.set_index(S.KEY).loc[keys]
    out = []
    for key, row in picked.iterrows():
        record = {S.STEP: int(row[S.STEP]), **texts.get(key, {}), "exported": "board",
                  "key": key}
        for column in S.SCALAR_KEYS:
            if pd.notna(row[column]):
                record[column] = float(row[column])
        out.append(orjson.dumps(record) + b"\n")
    return out
