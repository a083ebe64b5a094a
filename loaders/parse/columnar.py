"""Rows of the board's own Parquet dumps (loaders/writer/parquet.py) as records, by row group.

Number-list columns become numpy views into one float64 array per column and row group (no
Python float per token), lists of strings a lazy Tokens sequence over the Arrow array (a
token's text is made only when asked for), everything else plain Python values.  A null
cell is a key the sample did not have.  Columns the writer stored as JSON text (named in
the file's metadata) are decoded here; that is the only JSON a Parquet dump ever needs.
"""
from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import orjson
import pyarrow as pa

from loaders.find.remote import open_binary
from loaders.parse.footer import opened, read_checked
from loaders.writer.columns import META_KEY

# a loss weight the grouping reads as a list (0 everywhere leaves the sample out): kept a list
_AS_LISTS = frozenset({"sample_loss_mask", "loss_multiplier"})


class Tokens(list):
    """A response's token texts over a slice of an Arrow string array, made one at a time.

    A list (the summary's checks ask for one) whose len() and [i] read the Arrow array; its
    own storage stays empty, so only len(), [i] and iteration may be used on it.
    """

    def __init__(self, codes: np.ndarray, texts: pa.Array, start: int, end: int) -> None:
        super().__init__()
        self._codes, self._texts, self._start, self._end = codes, texts, start, end

    def __len__(self) -> int:
        return self._end - self._start

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        return self._texts[int(self._codes[self._start + index % len(self)])].as_py()

    def __iter__(self) -> Iterator[str]:
        codes = self._codes[self._start:self._end]
        return iter(self._texts.take(pa.array(codes)).to_pylist())

    def __bool__(self) -> bool:
        return len(self) > 0


def json_columns(schema: pa.Schema) -> frozenset[str]:
    """The columns the writer stored as JSON text."""
    try:
        meta = orjson.loads((schema.metadata or {}).get(META_KEY, b"{}"))
        return frozenset(meta.get("json_columns", ())) if isinstance(meta, dict) else frozenset()
    except orjson.JSONDecodeError:
        return frozenset()


def is_number_list(kind: pa.DataType) -> bool:
    return (pa.types.is_list(kind) or pa.types.is_large_list(kind)) and (
        pa.types.is_floating(kind.value_type) or pa.types.is_integer(kind.value_type))


def _string_list(kind: pa.DataType) -> bool:
    if not (pa.types.is_list(kind) or pa.types.is_large_list(kind)):
        return False
    item = kind.value_type
    if pa.types.is_dictionary(item):  # read as a dictionary (see dictionary_columns)
        item = item.value_type
    return pa.types.is_string(item) or pa.types.is_large_string(item)


def _arrays(name: str, array: pa.Array) -> list:
    """One column's cells: numpy views, Tokens, or Python values (None where null)."""
    kind = array.type
    if name not in _AS_LISTS and (is_number_list(kind) or _string_list(kind)):
        offsets = array.offsets.to_numpy()
        valid = array.is_valid().to_numpy(zero_copy_only=False)
        if is_number_list(kind):
            flat = np.asarray(array.values.to_numpy(zero_copy_only=False), dtype=np.float64)
            make = flat.__getitem__
            return [(make(slice(a, b)) if b > a else []) if ok else None
                    for a, b, ok in zip(offsets[:-1].tolist(), offsets[1:].tolist(), valid)]
        codes, texts = _codes(array.values)
        return [(Tokens(codes, texts, a, b) if b > a else []) if ok else None
                for a, b, ok in zip(offsets[:-1].tolist(), offsets[1:].tolist(), valid)]
    return array.to_pylist()


def _codes(values: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """(a code per token, the texts the codes index): a column read as a dictionary (see
    dictionary_columns) gives them as they are; plain strings are their own texts."""
    if pa.types.is_dictionary(values.type):
        return values.indices.to_numpy(zero_copy_only=False), values.dictionary
    return np.arange(len(values)), values


def token_text_columns(schema: pa.Schema) -> list[str]:
    """The list<string> columns (token texts), which this module reads as dictionaries."""
    return [f.name for f in schema if _string_list(f.type)]


def dictionary_columns(schema: pa.Schema) -> list[str]:
    """The list<string> leaf columns (token texts), to be read as dictionaries: indices
    and the distinct texts, never a Python string per token."""
    return [f"{f.name}.list.element" for f in schema if _string_list(f.type)]


def row_checks(table: pa.Table) -> list[int]:
    """schema.LINE_CHECK of each row: CRC-32 of its values that are not lists (the files are
    written once and replaced whole, and the file's content hashes cover the rest)."""
    names = [f.name for f in table.schema if not (is_number_list(f.type)
                                                  or _string_list(f.type))]
    rows = table.select(names).to_pylist()
    return [zlib.crc32(orjson.dumps(row, default=repr, option=orjson.OPT_SORT_KEYS
                                    | orjson.OPT_NON_STR_KEYS)) for row in rows]


def records(table: pa.Table, as_json: frozenset[str]) -> list[dict]:
    """The table's rows as records (null cells left out, JSON columns decoded)."""
    columns = {name: _arrays(name, column.combine_chunks())
               for name, column in zip(table.column_names, table.columns)}
    out = []
    for i in range(table.num_rows):
        out.append({name: cells[i] for name, cells in columns.items() if cells[i] is not None})
    for name in as_json.intersection(columns):
        for record in out:
            if name in record:
                record[name] = _decoded(record[name])
    return out


def _decoded(text: object) -> object:
    try:
        return orjson.loads(text) if isinstance(text, str) else text
    except orjson.JSONDecodeError:
        return text


def read_rows(path: Path, indices: list[int]) -> list[tuple[dict, int]]:
    """(record with plain lists, row check) of each row index, reading only the row groups
    that hold them (token texts as a dictionary: only the row's are made strings).  Raises
    OSError, IndexError (a row past the end) or an Arrow error."""
    source = open_binary(path)
    handle = opened(source, dictionary_columns)  # OverBudget (a ValueError) past a budget
    meta, schema = handle.metadata, handle.schema_arrow
    starts = np.cumsum([0] + [meta.row_group(g).num_rows for g in range(meta.num_row_groups)])
    as_json = json_columns(schema)
    out: dict[int, tuple[dict, int]] = {}
    for group in sorted({int(np.searchsorted(starts, i, side="right")) - 1 for i in indices}):
        if not 0 <= group < meta.num_row_groups:
            raise IndexError(f"row past the end of {path.name}")
        table = read_checked(handle, [group], token_text_columns(schema))
        for i in indices:
            if starts[group] <= i < starts[group + 1]:
                row = table.slice(i - int(starts[group]), 1)
                out[i] = (_plain(records(row, as_json)[0]), row_checks(row)[0])
    return [out[i] for i in indices]


def _plain(record: dict) -> dict:
    """A record with its arrays as Python lists (what the token table takes)."""
    return {key: value.tolist() if isinstance(value, np.ndarray)
            else list(iter(value)) if isinstance(value, Tokens) else value
            for key, value in record.items()}
