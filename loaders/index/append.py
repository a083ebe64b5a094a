"""A followed run's growth between saves, in proportion to the growth: its rows sorted with
the held rows of their steps only, then put after the rows before those steps.

A refresh otherwise sorts and types the whole run again (table.combine): 1.2 s a growth of
1,024 rows on a million-sample run, whatever the growth.  A trainer appends its steps in
order, so a growth's rows sort after every held row of an earlier step; the rows of the
steps it adds to (a step some ranks had written at the last refresh) are sorted again with
it.  Where the growth would change a held row (a file parsed again whole or gone, an extra
column new to the run, a column whose type it moves, a generation cap it moves, from which
truncation is inferred for every row), None: the caller combines the whole run, as before.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.index.grown_columns import GrownColumns
from loaders.index.index_columns import IndexColumns
from loaders.index.parts import Part, part_of, steps_of
from loaders.index.table import cap_of, cappable, combine, length_cap, truncated_at

_TEXTS = {*S.READ_BY_ROW, S.KEY}  # a served frame holds none; a growth's rows bring theirs


def appended(held: pd.DataFrame, parts: list[Part], kept_files: set[str]
             ) -> pd.DataFrame | None:
    """The frame table.combine makes of a served frame's rows and a growth's parts (numbered
    on: previews.next_row), with the held rows' text columns left empty; None where that
    takes the whole run (see the module)."""
    steps = steps_of(parts)
    if not len(held) or not steps or not kept(held, kept_files) or _new_columns(
            set(held.columns), parts):
        return None
    split = int(np.searchsorted(held[S.STEP].to_numpy(), min(steps), side="left"))
    before, redone = held.iloc[:split], held.iloc[split:]
    middle = combine([part_of(redone), *parts])  # a list of its own: combine empties it
    cap = cap_of(np.concatenate([held[S.RESPONSE_LEN].to_numpy()[:split][
        cappable(before)], middle[S.RESPONSE_LEN].to_numpy()[cappable(middle)]]))
    if cap != length_cap(held):
        return None  # every row's inferred truncation moves
    middle[S.TRUNCATED], middle[S.TRUNCATION_INFERRED] = truncated_at(middle, cap)
    return _joined(before, middle)


def grown_columns(columns: IndexColumns | GrownColumns, parts: list[Part],
                  kept_files: set[str]) -> tuple[GrownColumns, pd.DataFrame] | None:
    """appended() for numbers left in an index file: the file's rows before the growth's
    first step stay there, the rows from that step on are held (GrownColumns), with the
    growth sorted in; and the rows made (the growth's with their texts).  None where
    appended() would take the whole run, or where the held rows would not read as the
    file's (another type)."""
    steps, names = steps_of(parts), [*columns.names, S.ROW]
    if not columns.rows or not steps or _new_columns(set(names), parts) or not set(
            map(str, columns.categories(S.FILE))) <= kept_files:
        return None
    ranges = columns.ranges
    at = int(np.searchsorted(ranges.steps, min(steps), side="left"))
    split = int(ranges.starts[at]) if at < len(ranges.steps) else columns.rows
    redone = [part_of(columns.rows_between(split, columns.rows, names))] * (split < columns.rows)
    middle = combine([*redone, *parts])
    lengths = columns.read([n for n in (S.RESPONSE_LEN, S.TRAINED_SHARE) if n in names])
    cap = cap_of(np.concatenate([lengths[S.RESPONSE_LEN].to_numpy()[:split][
        cappable(lengths.iloc[:split])], middle[S.RESPONSE_LEN].to_numpy()[cappable(middle)]]))
    if cap != length_cap(lengths) or set(names) - set(middle.columns):
        return None
    middle[S.TRUNCATED], middle[S.TRUNCATION_INFERRED] = truncated_at(middle, cap)
    base, prefix = (columns.base, columns.prefix) if isinstance(columns, GrownColumns) else (
        columns, columns.rows)
    prefix = min(prefix, split)  # the rows still read from the file
    # held rows before the split (an earlier growth's), then the split's rows made again
    tail = middle[names] if split <= prefix else _joined(
        columns.tail.iloc[:split - prefix][names], middle[names])
    if tail is not None and prefix:  # the held rows typed as the file's, or none held
        tail = _joined(base.rows_between(0, 1, names), tail)
        tail = None if tail is None else tail.iloc[1:]
    return None if tail is None else (GrownColumns(base, prefix, tail), middle)


def kept(held: pd.DataFrame, kept_files: set[str]) -> bool:
    """Every file the held rows come from is kept (grown or as it was), from the file
    column's categories: no pass over the rows."""
    column = held[S.FILE]
    files = column.cat.categories if isinstance(column.dtype, pd.CategoricalDtype) else (
        column.unique())
    return set(map(str, files)) <= kept_files


def _new_columns(held: set[str], parts: list[Part]) -> bool:
    """A part has a column the held rows have not (a new extra column: the run's cap on
    extra columns is then the whole run's to apply)."""
    have = held | _TEXTS
    return any(name not in have for part in parts for name in part.column_names)


def _joined(before: pd.DataFrame, middle: pd.DataFrame) -> pd.DataFrame | None:
    """before then middle, each column of the type it has in before; None where middle's
    differ (a combine of all rows would have typed them together).  A column only middle
    has (a growth's texts) is left missing in before's rows."""
    if set(before.columns) - set(middle.columns):
        return None
    for name in before.columns:
        a, b = before[name].dtype, middle[name].dtype
        if isinstance(a, pd.CategoricalDtype) and isinstance(b, pd.CategoricalDtype):
            categories = a.categories.union(b.categories).sort_values()
            if not a.categories.equals(categories):  # a new file: the held rows recoded
                before = before.assign(**{name: before[name].cat.set_categories(categories)})
            middle[name] = middle[name].cat.set_categories(categories)
        elif a != b:
            return None
    for name in middle.columns.difference(before.columns):  # a growth's texts, places:
        kind = middle[name].dtype  # numbers stay numbers (read back from the growth's rows)
        if isinstance(kind, np.dtype) and kind.kind in "biuf":
            before = before.assign(**{name: np.zeros(len(before), kind)})
    order = [*before.columns, *(c for c in middle.columns if c not in before.columns)]
    return pd.concat([before, middle], ignore_index=True)[order]  # as combine orders them


