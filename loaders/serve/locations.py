"""Where each sample of a run is stored, found by its key without a dict of every key.

A dict from a million keys to Location tuples costs about 300 MB of Python objects (on the
long-run benchmark it was the largest thing the server held after the frame itself); the
frame already has the keys and the columns of a Location.  So the keys' 64-bit hashes are
sorted once (8 bytes a sample, plus 8 for their rows) and a lookup is a binary search, with
the key itself compared to rule out a hash collision.
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.serve.sample import Location


def _hashes(keys: Iterable[str] | pd.Series) -> np.ndarray:
    values = keys if isinstance(keys, pd.Series) else pd.Series(list(keys), dtype="string")
    return pd.util.hash_pandas_object(values, index=False).to_numpy()


_COLUMNS = (S.FILE, S.LINE, S.OFFSET, S.NBYTES, S.STEP, S.ITEM, S.LINE_CHECK)  # Location's


class Locations:
    """Location by key: `of(keys)` for many at once, `locations[key]` for one (KeyError when
    the run has no such sample)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame
        hashes = _hashes(frame[S.KEY].astype("string"))
        self._order = np.argsort(hashes, kind="stable")
        self._sorted = hashes[self._order]

    def __len__(self) -> int:
        return len(self._order)

    def __getitem__(self, key: str) -> Location:
        return self.of([key])[0]

    def of(self, keys: list[str]) -> list[Location]:
        """The Location of each key, in order; KeyError names the first one not found."""
        rows = self._rows(keys)
        columns = [self._frame[name].to_numpy()[rows] for name in _COLUMNS[1:]]
        files = self._frame[S.FILE].iloc[rows].astype(str).tolist()
        return [Location(file, line, offset, nbytes, step, item,
                         None if pd.isna(check) else check)
                for file, line, offset, nbytes, step, item, check
                in zip(files, *(column.tolist() for column in columns))]

    def _rows(self, keys: list[str]) -> np.ndarray:
        """The frame's row of each key: the first row of its hash, or (a collision: another
        key with the same hash) the next ones, compared by the key itself."""
        if not keys:
            return np.zeros(0, dtype=np.int64)
        if not len(self):
            raise KeyError(keys[0])
        start = np.searchsorted(self._sorted, _hashes(keys), side="left")
        rows = self._order[np.minimum(start, len(self._order) - 1)].copy()
        column = self._frame[S.KEY]
        # a take from the Arrow column has a fixed cost of milliseconds: one key reads one cell
        stored = (np.array([column.iat[row] for row in rows], dtype=object) if len(rows) < 64
                  else column.iloc[rows].to_numpy(dtype=object))
        for i in np.flatnonzero(stored != np.asarray(keys, dtype=object)):
            rows[i] = self._search(keys[i], int(start[i]))
        return rows

    def _search(self, key: str, start: int) -> int:
        stored = self._frame[S.KEY]
        at = start
        while at < len(self._order) and self._sorted[at] == self._sorted[start]:
            if stored.iat[int(self._order[at])] == key:
                return int(self._order[at])
            at += 1
        raise KeyError(key)
