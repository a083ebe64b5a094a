"""The on-disk index: the summary frame as Parquet, with per-file state in its metadata.

One file, ``index.parquet``, holds both, and it is replaced atomically (write to a temp file,
fsync, rename), so a crash leaves the old index or none, never a torn one.  Where it lives is
loaders.index.cachedir's business; what is read back is checked by loaders.index.trust
before any of it is used, since anyone who can write the dump dir can plant one.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from loaders import schema as S
from loaders.find.remote import is_url
from loaders.formats import BY_NAME
from loaders.index.cachedir import (
    INDEX_NAME,
    locate,
    read_index,
    user_cache_dir,
)
from loaders.index.file_previews import FilePreviews
from loaders.index.grown_columns import GrownColumns
from loaders.index.hashes import EDGE_BYTES, SAMPLED_BLOCKS, content_hashes
from loaders.index.index_columns import IndexColumns
from loaders.index.numbers import number_columns
from loaders.index.previews import (
    Previews,
    stored_frame,
    without_texts,
)
from loaders.index.stale_marks import without_marked
from loaders.index.table import empty_frame
from loaders.index.trust import (
    Untrusted,
    check_inside,
    check_rows,
    check_types,
    checked_problems,
    checked_states,
)

INDEX_VERSION = S.INDEX_VERSION  # what an index file was made by (a stored summary: its own)
_TEXT = (pa.types.is_string, pa.types.is_large_string)
_READ_BY_ROW_TYPES = {
    **{name: lambda kind: any(test(kind) for test in _TEXT) for name in S.TEXT_PREVIEWS},
    **{name: pa.types.is_integer for name in S.LINE_PLACE},
    S.TOKEN_DIGEST: lambda kind: pa.types.is_binary(kind) or pa.types.is_null(kind),
    # a conversation's columns: numbers or texts, or nothing at all in a single-turn run
    **{name: lambda kind: pa.types.is_floating(kind) or pa.types.is_integer(kind)
       or pa.types.is_null(kind) for name in (S.TURNS, S.TOOL_CALLS, S.TOOL_ERRORS,
                                              S.TRAINED_SHARE)},
    **{name: lambda kind: any(test(kind) for test in _TEXT) or pa.types.is_null(kind)
       for name in (S.TOOL_NAMES, S.LAST_FINISH)}}
__all__ = ["EDGE_BYTES", "SAMPLED_BLOCKS", "FileState", "Stored", "content_hashes", "load_index"]
META_KEY = b"rl_logging_board"  # the index file's own metadata (index_file.py)
# file times come from a coarse clock: a write in the same tick as our stat leaves the stat
# unchanged, so a state taken this soon after the file's last change is re-checked by content
RACY_NS = 2_000_000_000


@dataclass
class FileState:
    rel: str
    size: int
    mtime_ns: int
    parsed_until: int
    lines: int
    head_hash: str
    tail_hash: str
    ends_mid_line: bool = False
    pending_bytes: int = 0
    bad_lines: int = 0
    format: str = "native"  # a loaders.formats name, "metrics" or "unknown"
    inode: int = 0  # a file replaced by rename has a new one
    ctime_ns: int = 0  # changes on every write, even when mtime is restored afterwards
    block_hash: str = ""  # SAMPLED_BLOCKS blocks of the parsed part, between the edges
    checked_ns: int = 0  # wall clock when the stat above was taken

    def same_stat(self, stat: os.stat_result) -> bool:
        """The stat says nothing changed (size, mtime, ctime and inode all equal)."""
        return (self.size, self.mtime_ns, self.ctime_ns, self.inode) == (
            stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)

    @property
    def racy(self) -> bool:
        """The file changed so shortly before its stat was taken that a later write in the
        same clock tick would leave the stat as it is: only its content can tell."""
        return max(self.mtime_ns, self.ctime_ns) + RACY_NS > self.checked_ns

    def hashes(self) -> tuple[str, str, str]:
        return self.head_hash, self.tail_hash, self.block_hash


def stat_fields(stat: os.stat_result, checked_ns: int) -> dict:
    """The FileState fields a stat gives."""
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "ctime_ns": stat.st_ctime_ns,
            "inode": stat.st_ino, "checked_ns": checked_ns}


def index_dir(root: Path) -> Path:
    """Where the index of a dump dir lives (next to the dump when it is writable)."""
    return locate(root).path


@dataclass
class Stored:
    # without the text previews (numbered by S.ROW) when `previews` is set; None while it
    # is left in the index file it was read from (`numbers`), read whole only when asked
    held: pd.DataFrame | None
    files: dict[str, FileState]
    problems: list[dict]  # those marked "index" are about the cache itself: never saved
    previews: Previews | None = None  # the text previews, when not in the frame
    numbers: IndexColumns | GrownColumns | None = None  # the number columns, when in the file
    # after a refresh of a stored index: the steps whose rows it added, replaced or let go
    changed_steps: frozenset[int] | None = None

    @property
    def frame(self) -> pd.DataFrame:
        """The whole summary frame (read from the index file the first time, if left there)."""
        if self.held is None:
            self.held = self.numbers.read([*self.numbers.names, S.ROW])
        return self.held

    def rows_of(self, files: set[str], texts: bool = True) -> pd.DataFrame:
        """The samples of these files, with their text previews, as the index holds them;
        without `texts`, as a served run holds them (numbered by S.ROW)."""
        rows = self.frame[self.frame[S.FILE].astype("string").isin(files)]
        return stored_frame(rows, self.previews) if texts else rows

    @property
    def served(self) -> bool:
        """Its frame is numbered by S.ROW and its previews are read apart."""
        return self.previews is not None and (
            self.held is None or S.ROW in self.held.columns)


def index_note(place: Path, reason: str) -> dict:
    """A problem about the index cache, shown with the run's problems and never stored."""
    return {"file": str(place / INDEX_NAME), "line": 0, "reason": reason, "dropped": False,
            "index": True}


def load_index(root: Path) -> Stored | None:
    """The stored index of a dump dir, or None when there is none or it is of another
    version.  One that is unreadable or cannot be trusted (see loaders.index.trust) is
    ignored, as if there were none, with a note; so is an odd cache dir."""
    root = root if is_url(root) else Path(root).resolve()
    place = locate(root)
    notes = [index_note(place.path, place.note)] if place.note else []
    try:
        stored = read_index(place.path, lambda handle: _from_file(handle, root, place.path))
        if stored is None and place.path != user_cache_dir(root):
            # where save_kept puts it when the dump's own cache dir could not take it
            other = user_cache_dir(root)
            stored = read_index(other, lambda handle: _from_file(handle, root, other))
    except Untrusted as err:
        stored, notes = None, [*notes, index_note(place.path, f"index ignored: {err}")]
    except (OSError, KeyError, TypeError, ValueError, pa.ArrowException) as err:
        why = " ".join(str(err).split())[:120]
        reason = f"index ignored: unreadable ({type(err).__name__}: {why})"
        stored, notes = None, [*notes, index_note(place.path, reason)]
    if stored is None:
        return Stored(empty_frame(), {}, notes) if notes else None
    stored.files = without_marked(place.path, stored.files)
    stored.problems.extend(notes)
    return stored


def _from_file(handle: BinaryIO, root: Path, place: Path) -> Stored | None:
    """The index in handle, checked, its columns left in the file: read by column or by
    row later, through a descriptor of their own (the file replaced on disk meanwhile does
    not change them)."""
    schema = pq.read_schema(handle)
    meta = orjson.loads((schema.metadata or {}).get(META_KEY, b"null"))
    if not isinstance(meta, dict):
        raise Untrusted("no board metadata")
    if meta.get("version") != INDEX_VERSION:
        return None  # written by another version of the board: rebuilt, nothing to say
    for name in S.READ_BY_ROW:
        kind = schema.field(name).type if name in schema.names else None
        if kind is None or not _READ_BY_ROW_TYPES[name](kind):
            raise Untrusted(f"column {name!r} missing or of type {kind}")
    if meta.keys() != {"version", "files", "problems"}:
        raise Untrusted(f"malformed metadata: keys {sorted(meta)[:8]}")
    files = checked_states(meta["files"], FileState)
    check_inside(root, list(files))
    numbers = number_columns(schema.names)
    file = FilePreviews(os.fdopen(os.dup(handle.fileno()), "rb"), place / INDEX_NAME)
    try:
        columns = _checked(file, numbers, {rel for rel, state in files.items()
                                           if state.format in BY_NAME})
    except BaseException:
        file.close()
        raise
    problems = checked_problems(meta["problems"])
    if columns is None:  # an index of no rows (a run of empty files)
        return Stored(without_texts(empty_frame()), files, problems, file)
    return Stored(None, files, problems, file, columns)


def _checked(file: FilePreviews, numbers: list[str], dump_files: set[str]
             ) -> IndexColumns | None:
    """The number columns of the index in `file`, once their types (those of its first row
    group: a Parquet file has one type a column), its files and its places are checked;
    None when it has no row.  Arrow writes an empty category column as null, so an index of
    no rows keeps no column types: its frame is the schema's own empty one."""
    if not file.num_rows:
        return None
    check_types(file.read([0], numbers).to_pandas())
    _check_no_nulls(file.metadata, [n for n in numbers if S.SUMMARY_DTYPES.get(n) in _WHOLE]
                    + [S.OFFSET, S.NBYTES])
    columns = IndexColumns(file, numbers)
    places = file.read(None, [S.LINE, S.ITEM, S.OFFSET, S.NBYTES])
    check_rows(columns.categories(S.FILE), {name: pc.min(places.column(name)).as_py()
                                            for name in places.column_names}, dump_files)
    return columns


_WHOLE = ("int64", "int32", "bool")  # dtypes a null would turn into another


def _check_no_nulls(meta: pq.FileMetaData, names: list[str]) -> None:
    """No null in these columns, by every row group's statistics: the first row group's
    types say nothing of the others, where a null makes an int64 column float64 (and
    every key and place read from it wrong).  The board writes statistics; an index
    without them is not trusted."""
    at = {meta.schema.column(i).name: i for i in range(meta.num_columns)}
    for name in names:
        for group in range(meta.num_row_groups):
            stats = meta.row_group(group).column(at[name]).statistics
            if stats is None or not stats.has_null_count or stats.null_count:
                raise Untrusted(f"column {name!r} has nulls (or no statistics)")
