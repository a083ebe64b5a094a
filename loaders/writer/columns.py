"""The Parquet writer's columns: a buffer of samples -> one typed Arrow table.

Imports nothing of the board (a trainer copies it with __init__.py and parquet.py).  Columns: `step`
int64; text keys string; lists of floats (tensors, arrays, lists; None is NaN)
list<float32>; lists of ints list<int64>; lists of strings list<string>; numbers float64
(int64 when all are ints); flags bool.  A key whose values fit none of these (chat
messages, dicts, mixed types) is a string column of JSON, named in the table's metadata,
so no value is ever lost.
"""
from __future__ import annotations

import json

import numpy as np
import orjson
import pyarrow as pa

META_KEY = b"rl_logging_board"
LAYOUT = "rl_board_parquet"
LAYOUT_VERSION = 1


def cell(value: object) -> object:
    """A sample's value as the writer keeps it: arrays (tensors, lists of numbers) as 1-D
    numpy arrays (float32, or int64 for ids), lists of strings as lists, the rest as is."""
    if hasattr(value, "cpu") and hasattr(value, "numpy"):  # a torch tensor, maybe on a GPU
        value = value.detach().cpu()
        value = value.numpy() if str(value.dtype) != "torch.bfloat16" else value.float().numpy()
    elif hasattr(value, "tolist") and not hasattr(value, "__array__"):  # other array types
        value = value.tolist()
    if isinstance(value, (list, tuple)) and not value:
        return []  # fits any list column: numpy would call it floats
    if isinstance(value, (list, tuple)) or hasattr(value, "__array__"):
        try:
            arr = np.asarray(value)
        except (ValueError, TypeError):
            return list(value) if isinstance(value, tuple) else value
        if arr.ndim == 1 and arr.dtype.kind == "O" and arr.size:  # numbers with None (NaN)
            try:
                arr = np.array(value, dtype=np.float32)
            except (ValueError, TypeError):
                return value
        if arr.ndim == 1 and arr.dtype.kind == "f":
            return arr.astype(np.float32, copy=False)
        if arr.ndim == 1 and arr.dtype.kind in "iu" and arr.size:
            return arr.astype(np.int64, copy=False)
        if arr.ndim == 0 and arr.dtype.kind in "iufb":
            return arr.item()
        if isinstance(value, np.ndarray):
            return value.tolist()
        return list(value) if isinstance(value, tuple) else value
    if isinstance(value, np.generic):
        return value.item()
    return value


def _kind(value: object) -> str:
    if isinstance(value, np.ndarray):
        return "float_list" if value.dtype.kind == "f" else "int_list"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "str_list"
    return "json"


def _number_list(values: list, dtype: type, arrow: pa.DataType) -> pa.Array:
    """A list column from numpy arrays (None where missing) without a Python loop per item."""
    present = [v for v in values if v is not None]
    lengths = np.array([0 if v is None else len(v) for v in values], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int32)
    flat = np.concatenate(present).astype(dtype, copy=False) if present else np.zeros(0, dtype)
    mask = pa.array([v is None for v in values]) if len(present) < len(values) else None
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat, arrow), mask=mask)


def column(values: list) -> tuple[pa.Array, bool]:
    """(the Arrow column of one key's values, whether it is stored as JSON text)."""
    # an empty list fits any list column: it decides nothing
    kinds = {_kind(v) for v in values if v is not None and not (isinstance(v, list) and not v)}
    if any(isinstance(v, list) and not v for v in values) and not kinds:
        kinds = {"str_list"}
    if kinds <= {"float_list", "int_list"} and kinds:
        if kinds == {"int_list"}:
            return _number_list(values, np.int64, pa.int64()), False
        return _number_list(values, np.float32, pa.float32()), False
    simple = {frozenset({"bool"}): pa.bool_(), frozenset({"int"}): pa.int64(),
              frozenset({"int", "float"}): pa.float64(), frozenset({"float"}): pa.float64(),
              frozenset({"str"}): pa.string(), frozenset({"str_list"}): pa.list_(pa.string()),
              frozenset(): pa.null()}
    arrow = simple.get(frozenset(kinds))
    if arrow is not None:
        try:
            return pa.array(values, arrow), False
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):  # an int past int64
            pass
    return pa.array([None if v is None else _json(v) for v in values], pa.string()), True


def _json(value: object) -> str:
    if isinstance(value, np.ndarray):
        value = value.tolist()
    try:
        return orjson.dumps(value, default=repr, option=orjson.OPT_SERIALIZE_NUMPY
                            | orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:  # an int past 64 bits, say: Python's json writes any int
        return json.dumps(value, default=repr)


def table_of(samples: list[dict]) -> pa.Table:
    """The samples as one table, keys in first-seen order, JSON columns in the metadata."""
    names = list(dict.fromkeys(key for sample in samples for key in sample))
    arrays, as_json = [], []
    for name in names:
        array, is_json = column([sample.get(name) for sample in samples])
        arrays.append(array)
        if is_json:
            as_json.append(name)
    meta = {"layout": LAYOUT, "version": LAYOUT_VERSION, "json_columns": as_json}
    return pa.Table.from_arrays(arrays, names=names).replace_schema_metadata(
        {META_KEY: orjson.dumps(meta)})


def encodings(schema: pa.Schema) -> dict:
    """Float lists byte-stream-split (their exponent bytes then compress: a third smaller
    than plain, and faster to read than a dictionary that overflows); dictionaries only for
    strings and lists of strings (token texts repeat: a reader gets indices, not strings)."""
    def leaf(field: pa.Field) -> str:  # what the encoding options name: the leaf column
        return f"{field.name}.list.element" if pa.types.is_list(field.type) else field.name

    floats = [leaf(f) for f in schema if pa.types.is_list(f.type)
              and pa.types.is_floating(f.type.value_type)]
    others = [leaf(f) for f in schema if leaf(f) not in floats]
    return {"use_dictionary": others,
            "column_encoding": dict.fromkeys(floats, "BYTE_STREAM_SPLIT")}
