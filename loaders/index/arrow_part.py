"""A batch's summary columns as an Arrow table, and parts made alike in type: free of pandas,
so a parser worker can make them (a Parquet dump's stored summary meets its batch's rows
there: pool), as the main process does for the whole run (parts.sorted_parts)."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from loaders.index import kernel
from loaders.index.chunk import Coded, Columns
from loaders.parse.repair import encodable


def table_of(columns: Columns | pa.Table) -> pa.Table:
    """A worker's summary columns as an Arrow table: a text column one buffer, not a
    Python object a row.  A table (rows read as a file stored them) is kept as it is."""
    if isinstance(columns, pa.Table):
        return columns
    return pa.table({name: _arrow(values) for name, values in columns.items()})


def _arrow(values: list | np.ndarray | Coded) -> pa.Array:
    """One column; a column that mixes numbers and text becomes text (typed() makes it
    numbers again when every value reads as one, as it does for any text column)."""
    if isinstance(values, Coded):
        missing = values.codes < 0  # -1: a null
        codes = _numbers(values.codes, missing if missing.any() else None)  # else as is
        texts = _strings(values.texts)
        return pa.DictionaryArray.from_arrays(
            codes, pa.array(values.texts, pa.string()) if texts is None else texts)
    if isinstance(values, list) and (texts := _strings(values)) is not None:
        return texts
    if isinstance(values, np.ndarray) and (numbers := _numbers(values)) is not None:
        return numbers
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeError):
        return pa.array([None if v is None or isinstance(v, float) and v != v  # NaN: missing
                         else encodable(v if isinstance(v, str) else str(v)) for v in values],
                        type=pa.string())


def _numbers(values: np.ndarray, missing: np.ndarray | None = None) -> pa.Array | None:
    """A 1-d array of numbers or bools as Arrow's, its buffer used as it is (`missing`: the
    nulls): the array pa.array makes of it, without pa.array's checks for pandas objects on
    each of a part's ~60 columns.  None for any other array (pa.array is the way)."""
    if values.ndim != 1 or values.dtype.kind not in "biuf" or values.dtype.byteorder == ">":
        return None
    valid = None if missing is None else pa.py_buffer(np.packbits(~missing, bitorder="little"))
    if values.dtype.kind == "b":
        data = pa.py_buffer(np.packbits(values, bitorder="little"))
    else:
        data = pa.py_buffer(np.ascontiguousarray(values))
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [valid, data],
                                 null_count=-1 if missing is not None else 0)


def _strings(values: list) -> pa.Array | None:
    """A list of str and None as Arrow text, its buffers laid out in C (kernel.utf8): the
    array pa.array makes of it, without Arrow's check and builder a value; None where
    pa.array is the way (another type in it, no build)."""
    buffers = kernel.utf8(values)
    if buffers is None:
        return None
    offsets, data, valid = buffers
    return pa.Array.from_buffers(pa.string(), len(values), [
        None if valid is None else pa.py_buffer(valid), pa.py_buffer(offsets),
        pa.py_buffer(data)])


def concatenated(parts: list[pa.Table]) -> pa.Table:
    """The parts one after the other, made alike in type (same_types) first; promoted
    column by column only when their schemas still differ (a null column beside a typed
    one): Arrow's promotion costs 10x the concatenation."""
    parts = same_types(parts)
    if all(part.schema.equals(parts[0].schema) for part in parts[1:]):
        return pa.concat_tables(parts)
    return pa.concat_tables(parts, promote_options="permissive")


def same_types(parts: list[pa.Table]) -> list[pa.Table]:
    """Every column of one kind in all parts: text wherever one part has it as text and
    another as anything but text or nulls; and plain text wherever one part has it as codes
    and another as plain text (a followed run's new parts beside its stored rows), decoded
    by Arrow in the parts that have codes."""
    if all(part.schema.equals(parts[0].schema) for part in parts[1:]):
        return parts  # the usual case, without a loop over every part's every field
    kinds: dict[str, set[str]] = {}
    coded: dict[str, set[bool]] = {}
    for part in parts:
        for field in part.schema:
            kinds.setdefault(field.name, set()).add(_kind(field.type))
            coded.setdefault(field.name, set()).add(pa.types.is_dictionary(field.type))
    mixed = {name for name, found in kinds.items() if "text" in found and found - {
        "text", "null"}}
    decode = {name for name, found in coded.items() if len(found) == 2} - mixed
    if not mixed and not decode:
        return parts
    return [_decoded(_as_text(part, mixed.intersection(part.column_names)),
                     decode.intersection(part.column_names)) for part in parts]


def _kind(kind: pa.DataType) -> str:
    if pa.types.is_null(kind):
        return "null"
    if pa.types.is_dictionary(kind):  # codes of text are text
        kind = kind.value_type
    return "text" if pa.types.is_string(kind) or pa.types.is_large_string(kind) else str(kind)


def _decoded(part: pa.Table, names: set[str]) -> pa.Table:
    for name in names:
        at, field = part.schema.get_field_index(name), part.schema.field(name)
        if pa.types.is_dictionary(field.type):
            part = part.set_column(at, name, part.column(at).cast(field.type.value_type))
    return part


def _as_text(part: pa.Table, names: set[str]) -> pa.Table:
    for name in names:
        values = part.column(name).to_pylist()
        at = part.schema.get_field_index(name)
        part = part.set_column(at, name, pa.array(
            [None if v is None or isinstance(v, float) and v != v else str(v) for v in values],
            type=pa.string()))
    return part
