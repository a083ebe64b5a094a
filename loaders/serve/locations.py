"""Where each sample of a run is stored, found by its key without a dict of every key.

A dict from a million keys to Location tuples costs about 300 MB of Python objects, and a
served run holds no key at all: a key is "file:line[#item]" (schema.sample_key), so it is
parsed back into (file, line, item) and found by binary search among the run's rows, sorted
once by those three packed in one 64-bit number (16 bytes a sample with the order).  Where
the line is (offset, length, check) is read for the rows found (loaders.index.previews).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.index.previews import Previews, with_texts
from loaders.serve.sample import Location

# bits of the packed (file, line, item): 16 for the file's code, 32 for the line, 16 for the
# item; a run past them (65,536 files, 4e9 lines, a line of 65,536 samples) packs by field
_FILE_BITS, _ITEM_BITS, _LINE_BITS = 16, 16, 32


def parsed(key: str) -> tuple[str, int, int] | None:
    """(file, line, item) of a sample key, None when it is not one."""
    file, _, place = key.rpartition(":")
    line, _, item = place.partition("#")
    numbers = (line, item or "0")  # past 18 digits, no int64 holds it: no sample has it
    if not file or not all(n.isascii() and n.isdigit() and len(n) <= 18 for n in numbers):
        return None
    return file, int(line), int(item or 0)


def _within(codes: np.ndarray, lines: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Which rows' (file, line, item) fit the packed bits."""
    return (codes < 1 << _FILE_BITS) & (lines < 1 << _LINE_BITS) & (items < 1 << _ITEM_BITS)


def _packed(codes: np.ndarray, lines: np.ndarray, items: np.ndarray, by_field: bool
            ) -> np.ndarray:
    """One 64-bit number per row, or (by_field) a record of three: both sort as the tuple."""
    if not by_field:
        return ((codes.astype(np.uint64) << np.uint64(_LINE_BITS + _ITEM_BITS))
                | (lines.astype(np.uint64) << np.uint64(_ITEM_BITS)) | items.astype(np.uint64))
    out = np.zeros(len(codes), dtype=[("file", "<i8"), ("line", "<i8"), ("item", "<i8")])
    out["file"], out["line"], out["item"] = codes, lines, items
    return out


class Locations:
    """Location by key: `of(keys)` for many at once, `locations[key]` for one (KeyError when
    the run has no such sample)."""

    def __init__(self, frame: pd.DataFrame, previews: Previews | None) -> None:
        self._frame, self._previews = frame, previews
        files = frame[S.FILE].astype("category")
        self._codes = {str(name): i for i, name in enumerate(files.cat.categories)}
        places = (files.cat.codes.to_numpy(np.int64), frame[S.LINE].to_numpy(np.int64),
                  frame[S.ITEM].to_numpy(np.int64))
        self._by_field = not _within(*places).all()
        packed = _packed(*places, self._by_field)
        self._order = (np.lexsort((packed["item"], packed["line"], packed["file"]))
                       if self._by_field else np.argsort(packed, kind="stable"))
        self._sorted = packed[self._order]

    def __len__(self) -> int:
        return len(self._order)

    def __getitem__(self, key: str) -> Location:
        return self.of([key])[0]

    def of(self, keys: list[str]) -> list[Location]:
        """The Location of each key, in order; KeyError names the first one not found."""
        rows = self._frame.iloc[self._rows(keys)]
        if self._previews is not None:
            rows = with_texts(rows, self._previews, S.LINE_PLACE)
        columns = [rows[name].to_numpy() for name in (S.LINE, S.OFFSET, S.NBYTES, S.STEP,
                                                      S.ITEM)]
        checks = [None if pd.isna(c) else int(c) for c in rows[S.LINE_CHECK].tolist()]
        return [Location(file, *numbers, check) for file, *numbers, check in zip(
            rows[S.FILE].astype(str).tolist(), *(c.tolist() for c in columns), checks)]

    def _rows(self, keys: list[str]) -> np.ndarray:
        wanted = [parsed(key) for key in keys]
        codes = [self._codes.get(w[0], -1) if w else -1 for w in wanted]
        for key, code in zip(keys, codes):
            if code < 0:
                raise KeyError(key)
        places = (np.array(codes, dtype=np.int64),
                  np.array([w[1] for w in wanted], dtype=np.int64),
                  np.array([w[2] for w in wanted], dtype=np.int64))
        within = _within(*places)
        if not self._by_field and not within.all():  # past the run's packed bits: not in it
            raise KeyError(keys[int(np.argmin(within))])
        query = _packed(*places, self._by_field)
        at = np.minimum(np.searchsorted(self._sorted, query), max(len(self) - 1, 0))
        found = self._sorted[at] == query if len(self) else np.zeros(len(keys), dtype=bool)
        if not found.all():
            raise KeyError(keys[int(np.argmin(found))])
        return self._order[at]
