"""Every indexed line of a file checked against its bytes on disk, for a same-size change.

A file whose stat changed while its size did not was touched (its bytes as they were) or
edited in place.  The edge and sampled-block hashes (loaders.index.hashes) catch a rewrite,
not an edit between the blocks; but the index holds each line's XXH3 check (schema.LINE_CHECK)
with its offset and length, so one read of the file tells, line by line, and the file is
parsed again only when a line differs.  About a microsecond a line, run only on such a change:
never on growth, which a followed file shows at every poll (there the sampled hashes stand).
"""
from __future__ import annotations

import mmap
from pathlib import Path

import numpy as np

from loaders import schema as S
from loaders.index.ondisk import Stored
from loaders.index.previews import with_texts
from loaders.parse.record import line_check

Places = tuple[np.ndarray, np.ndarray, np.ndarray]  # offsets, lengths, checks of the lines


def stored_places(stored: Stored, rel: str) -> Places:
    """Where each line of `rel` the index holds is, and its check (a line of many samples
    once)."""
    rows = stored.frame[stored.frame[S.FILE] == rel]
    if stored.previews is not None and S.LINE_CHECK not in rows.columns:
        rows = with_texts(rows[[S.ROW]], stored.previews, S.LINE_PLACE, keys=False)
    rows = rows.drop_duplicates(S.OFFSET)
    return tuple(rows[name].to_numpy(np.int64) for name in S.LINE_PLACE)


def lines_unchanged(path: Path, places: Places) -> bool:
    """Every line at these places still has the check it was indexed with."""
    offsets, lengths, checks = places
    if not len(offsets):
        return True
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ
                                               ) as data:
        if int((offsets + lengths).max()) > len(data):
            return False
        view = memoryview(data)
        try:
            return all(line_check(view[start:start + length]) == check for start, length, check
                       in zip(offsets.tolist(), lengths.tolist(), checks.tolist()))
        finally:
            view.release()
