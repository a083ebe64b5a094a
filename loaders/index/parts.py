"""The index's parts while a refresh assembles them: Arrow tables, one per scanned chunk (and
the stored index's rows it keeps), concatenated and sorted in Arrow, so the whole run becomes
a frame once, with no pandas copy a part (see table.combine).
"""
from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from loaders import schema as S
from loaders.heap import give_back
from loaders.index.arrow_part import concatenated
from loaders.index.extras import kept_extras
from loaders.index.in_place import InPlaceSort
from loaders.index.runs import gathered, runs_of, sort_order
from loaders.index.shared_part import hand_back

Part = pa.Table
# the system allocator: a copy of the run let go is memory the process gives back at once
# (Arrow's own pools keep freed memory for later, which the next copy does not reuse)
pa.set_memory_pool(pa.system_memory_pool())
_CODES = pa.dictionary(pa.int32(), pa.string())  # a worker's Coded text column
# a sort key's fill where a part lacks it (as table.typed fills it)
_SORT_FILLS = {S.STEP: 0, S.RANK: -1, S.FILE: "", S.LINE: 0, S.ITEM: 0}


def numbered(parts: list[Part], first: int) -> list[Part]:
    """The parts with their rows numbered in S.ROW, first, first + 1, ... in order."""
    out = []
    for part in parts:
        out.append(part.append_column(S.ROW, pa.array(np.arange(first, first + len(part)))))
        first += len(part)
    return out


def part_of(frame: pd.DataFrame) -> Part:
    """A frame (the stored index's rows a refresh keeps) as a part."""
    return pa.Table.from_pandas(frame, preserve_index=False)


def shifted(part: Part, by: int | np.ndarray) -> Part:
    """The part with `by` added to its line numbers (a file's lines before its chunk): one
    number as a scalar, and none to add at a file's first chunk (an array of it each cost
    0.1-0.2 ms in the main process after the scan, 2-3 ms over the 128,000-sample dump)."""
    at = part.schema.get_field_index(S.LINE)
    column = part.column(at)
    if np.ndim(by) == 0:
        if by == 0 and column.type == pa.int64():
            return part
        return part.set_column(at, S.LINE, pc.add(column, pa.scalar(int(by), pa.int64())))
    return part.set_column(at, S.LINE, pc.add(column, pa.array(np.asarray(by, np.int64))))


def cap_extras(parts: list[Part]) -> tuple[list[Part], dict[str, set[str]]]:
    """The parts with at most MAX_EXTRA_COLUMNS extra columns over all of them (each part
    is capped by its worker; together they may still hold more), and by file, the extra
    columns dropped here that had a value in one of its rows."""
    extra = {name for part in parts for name in part.column_names
             if name not in S.BOARD_COLUMNS}
    if len(extra) <= S.MAX_EXTRA_COLUMNS:
        return parts, {}
    gone = extra.difference(kept_extras(extra))
    capped, dropped = [], {}
    for part in parts:
        names = [name for name in part.column_names if name in gone]
        for name in names:
            held = part.column(S.FILE).filter(_has_value(part.column(name)))
            for file in pc.unique(held).to_pylist():
                dropped.setdefault(str(file), set()).add(name)
        capped.append(part.drop_columns(names))
    return capped, dropped


def _has_value(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """Not null, and not NaN (a missing number, as pandas sees it)."""
    valid = pc.is_valid(column)
    if pa.types.is_floating(column.type):
        return pc.and_(valid, pc.invert(pc.is_nan(column)))
    return valid


def sorted_parts(parts: list[Part], decoded: frozenset[str] = frozenset()) -> pa.Table:
    """The parts as one table sorted by schema.SORT_KEYS (stable: a tie keeps part order);
    a column that is numbers in one part and text in another becomes text, and one named in
    `decoded` that came as codes becomes its text.  Empties `parts`: each copy of the run is
    let go as soon as the next one is made."""
    plain = [_plain(part) for part in parts]
    parts.clear()
    table = concatenated(plain).unify_dictionaries()
    del plain
    sort_by: dict[str, pa.ChunkedArray] = {}
    for key, fill in _SORT_FILLS.items():  # Arrow sorts neither nulls as typed() fills
        if key not in table.column_names:  # them nor dictionaries
            continue
        at, column = table.schema.get_field_index(key), table.column(key)
        ranks = _text_ranks(column)
        if ranks is not None:  # the file names stay codes: sorted by their ranks
            sort_by[key] = ranks
            continue
        coded = pa.types.is_dictionary(column.type)
        if coded:
            column = column.cast(column.type.value_type)
        if coded or column.null_count:  # a fill copies the column, even one without nulls
            table = table.set_column(at, key, pc.fill_null(column, fill))
        sort_by[key] = table.column(key)
    order = sort_order([sort_by[key] for key in S.SORT_KEYS if key in sort_by])
    del sort_by
    held = [table]
    del table  # _taken holds the only reference: each column goes once it is sorted
    return _taken(held, order, decoded)


def _text_ranks(column: pa.ChunkedArray) -> pa.ChunkedArray | None:
    """Each row's rank among the texts of a coded column without nulls (all its chunks
    sharing one dictionary: unify_dictionaries'), so the sort compares numbers, not the
    texts a row (the long run's sort 0.12 -> 0.06 s); None for any other column."""
    if not pa.types.is_dictionary(column.type) or not column.num_chunks or column.null_count:
        return None
    texts = column.chunk(0).dictionary
    if not all(chunk.dictionary.equals(texts) for chunk in column.chunks[1:]):
        return None
    ranks = pc.rank(texts, sort_keys="ascending", tiebreaker="dense")
    return pa.chunked_array([pc.take(ranks, chunk.indices) for chunk in column.chunks])


def _taken(held: list[pa.Table], order: pa.Array, decoded: frozenset[str]) -> pa.Table:
    """The table in `held` (taken out of it) sorted by `order`, a column at a time (from
    THREADED_TAKE_ROWS on TAKERS threads; the `decoded` ones' codes then made text), each
    column let go as soon as its sorted copy is made, and a large run's freed memory given
    back every TAKEN_AT_ONCE columns: the run is held once and a few columns, never twice (a
    whole-table take held both: 1.4 GB at the long run's peak for 0.65 GB of parts)."""
    table = held.pop()
    fields, columns, metadata = list(table.schema), list(table.columns), table.schema.metadata
    trim, rows = table.nbytes >= WHOLE_TAKE_BYTES, table.num_rows
    del table  # `columns` holds the only references
    for at, field in enumerate(fields):  # codes decoded as pandas' text holds them (made
        if field.name in decoded and pa.types.is_dictionary(field.type):  # so, not copied
            fields[at] = field.with_type(pa.large_string())  # again by the frame's making)

    runs = runs_of(order)
    # a small run is copied: mapping each part's slabs costs more than the copy saves
    # (medium's sort 37 -> 21 ms, large's 132 -> 63), and its memory is no concern
    in_place = InPlaceSort(columns, runs if trim else None)

    def take(at: int) -> pa.Array:
        column, columns[at] = columns[at], None
        out = in_place.sorted(at, column)
        if out is not None:  # in its parts' own pages: none to hand back
            return out if out.type == fields[at].type else out.cast(fields[at].type)
        out = gathered(column, runs, fields[at].type) if runs is not None else None
        # else joined first: a take over a column's chunks finds each row's chunk, which
        # costs more than the join's copy (the long run: 0.50 -> 0.30 s)
        out = column.combine_chunks().take(order) if out is None else out
        if trim:  # a worker's part read in place: its pages go now, not with the part (a
            hand_back(column)  # small run's go with its parts, without a call a buffer)
        return out if out.type == fields[at].type else out.cast(fields[at].type)

    # a small run's columns are taken here: handed to a taker thread and back, medium's 56
    # took 17-24 ms against 8-15 ms in this thread
    taken = _on_takers(take, len(columns), trim) if trim or rows >= THREADED_TAKE_ROWS else [
        take(at) for at in range(len(columns))]
    in_place.done()  # the parts' files let go of what no sorted column holds
    return pa.Table.from_arrays(taken, schema=pa.schema(fields, metadata))


def _on_takers(take: Callable[[int], pa.Array], count: int, trim: bool = True
               ) -> list[pa.Array]:
    """take(0), ..., take(count - 1) on TAKERS threads (a take is one thread's; the workers
    are done); with `trim`, the memory the columns freed given back every TAKEN_AT_ONCE
    columns (glibc keeps it otherwise: no lower peak)."""
    taken: list[pa.Array] = []
    with ThreadPoolExecutor(TAKERS) as takers:
        for array in takers.map(take, range(count)):
            taken.append(array)
            if trim and len(taken) % TAKEN_AT_ONCE == 0:
                give_back()
    return taken


TAKEN_AT_ONCE = 8  # columns sorted between two returns of freed memory to the system
WHOLE_TAKE_BYTES = 128 << 20  # below this, a sort copies: nothing sorted in place, nor given
# back as it goes
THREADED_TAKE_ROWS = 1 << 16  # from this, a sort's copies run on TAKERS threads: each number
# column's copy is then big enough to beat the hand-over (the 128,000-sample dump's sort 88 ->
# 69 ms, median of 8); large (25,600 samples, most of its 30 MB texts) gained nothing
TAKERS = min(2, len(os.sched_getaffinity(0)))


def _plain(part: Part) -> Part:
    """Dictionary columns of other than int32 codes of text (a stored index's categories)
    as their values; the workers' coded texts stay codes (cheap to sort and take)."""
    for at, field in enumerate(part.schema):
        if pa.types.is_dictionary(field.type) and field.type != _CODES:
            part = part.set_column(at, field.name, part.column(at).cast(field.type.value_type))
    return part


def steps_of(parts: list[Part]) -> set[int] | None:
    """The steps the parts have rows at (a row without a step is at step 0, as typed);
    None when a part's steps are not whole numbers yet (the caller then knows nothing)."""
    steps: set[int] = set()
    for part in parts:
        if not part.num_rows:
            continue
        if S.STEP not in part.column_names or not pa.types.is_integer(part.schema.field(
                S.STEP).type):
            return None
        steps.update(pc.unique(pc.fill_null(part.column(S.STEP), 0)).to_pylist())
    return steps
