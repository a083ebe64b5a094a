"""What a run holds that is no problem of a line, each with its file and line: samples kept
whose values the board read around (non-finite numbers, token lists of different lengths)
and half-written lines pending at file ends.

A problem (a bad line, a bad field) is recorded while a file is parsed.  These are counts of
the index's own columns (schema.NAN_COUNT, schema.LENGTH_MISMATCH) and of its files' states,
located here, from those columns, for the Problems page and the CLI.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.index.ondisk import FileState

READ_AROUND_COLUMNS = (S.FILE, S.LINE, S.STEP, S.NAN_COUNT, S.LENGTH_MISMATCH)
NONFINITE_REASON = "{count} non-finite value{s} (NaN or ±inf) in its numbers or token lists"
MISMATCH_REASON = ("token lists of different lengths: aligned at the first token, cut to "
                   "the shortest")


def samples_read_around(columns: pd.DataFrame) -> pd.DataFrame:
    """One row a sample and reason, by step, file and line: `columns` holds the index's
    READ_AROUND_COLUMNS (a column the run lacks has found none)."""
    nan, mismatch = _flags(columns)
    nonfinite, mismatched = np.flatnonzero(nan > 0), np.flatnonzero(mismatch)
    reasons = [NONFINITE_REASON.format(count=n, s="" if n == 1 else "s")
               for n in nan[nonfinite].tolist()] + [MISMATCH_REASON] * len(mismatched)
    at = np.concatenate([nonfinite, mismatched])
    found = pd.DataFrame({
        "file": columns[S.FILE].to_numpy()[at].astype(str) if len(at) else np.array([], str),
        "line": columns[S.LINE].to_numpy()[at].astype(np.int64),
        "step": columns[S.STEP].to_numpy()[at].astype(np.int64),
        "reason": pd.array(reasons, dtype=object)})
    return found.sort_values(["step", "file", "line"], kind="stable", ignore_index=True)


def read_around_count(columns: pd.DataFrame) -> int:
    """How many samples samples_read_around lists, of their NAN_COUNT and LENGTH_MISMATCH."""
    nan, mismatch = _flags(columns)
    return int(((nan > 0) | mismatch).sum())


def _flags(columns: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each sample's count of non-finite values and its length-mismatch flag (none where the
    run lacks the column)."""
    return (_column(columns, S.NAN_COUNT, 0).astype(np.int64),
            _column(columns, S.LENGTH_MISMATCH, False).astype(bool))


def _column(columns: pd.DataFrame, name: str, missing: object) -> np.ndarray:
    if name not in columns:
        return np.full(len(columns), missing)
    return columns[name].fillna(missing).to_numpy()


def pending_lines(files: dict[str, FileState]) -> list[dict]:
    """Each file that ends in a half-written line: its name, that line's number and its
    bytes so far (read once the trainer finishes it: a line being written is no problem)."""
    return [{"file": state.rel, "line": state.lines + 1, "bytes": state.pending_bytes}
            for state in sorted(files.values(), key=lambda state: state.rel)
            if state.pending_bytes]
