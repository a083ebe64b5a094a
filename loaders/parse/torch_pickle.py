"""Reading `torch.save` files without torch, and without running any code from them.

torch.save (torch/serialization.py `_save`) writes a zip archive whose records sit under one
folder (`<archive>/`): `data.pkl`, a protocol-2 pickle of the object in which each storage
is a persistent id `("storage", torch.<Type>Storage, key, location, numel)`; `byteorder`;
and each storage's raw bytes as `data/<key>`.  A tensor is pickled as
`torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
OrderedDict())` (torch/_tensor.py `_reduce_ex_internal`, torch/_utils.py).

This unpickler allows only those globals and plain containers: a tensor becomes a numpy
array made from the archive's bytes; any other global (a class, `os.system`, a
`__reduce__` of any kind) is refused with PickleRefused, so nothing in the file runs.
"""
from __future__ import annotations

import collections
import io
import pickle
import zipfile
from pathlib import Path

import numpy as np

from loaders.find.remote import open_binary

MAX_PICKLE_BYTES = 256 << 20  # a data.pkl beyond this is refused rather than read
_STORAGE_DTYPES = {
    "DoubleStorage": np.float64, "FloatStorage": np.float32, "HalfStorage": np.float16,
    "BFloat16Storage": np.uint16, "LongStorage": np.int64, "IntStorage": np.int32,
    "ShortStorage": np.int16, "CharStorage": np.int8, "ByteStorage": np.uint8,
    "BoolStorage": np.bool_, "UntypedStorage": np.uint8,
}
_SAFE_BUILTINS = frozenset({"set", "frozenset", "complex", "slice"})


class PickleRefused(ValueError):
    """A torch file this reader will not or cannot read; the message says why."""


class _StorageType:
    def __init__(self, name: str) -> None:
        self.name = name
        self.dtype = np.dtype(_STORAGE_DTYPES[name])


def _bfloat16(raw: np.ndarray) -> np.ndarray:
    """bfloat16 bits (the high half of a float32) as float32."""
    return (raw.astype(np.uint32) << 16).view(np.float32)


def _rebuild_tensor(storage: tuple, offset: int, size: tuple, stride: tuple, *_: object
                    ) -> np.ndarray:
    data, bfloat = storage
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride) or any(s < 0 for s in size + stride) or offset < 0:
        raise PickleRefused("a tensor with a negative size, stride or offset")
    last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else offset - 1
    if last >= len(data):
        raise PickleRefused(f"a tensor reaching past its storage ({last} >= {len(data)})")
    if int(np.prod(size, dtype=np.float64)) > max(len(data), 1 << 20):
        raise PickleRefused(f"a tensor of {size} elements over {len(data)} stored")
    view = np.lib.stride_tricks.as_strided(data[offset:], size, tuple(
        s * data.itemsize for s in stride), writeable=False) if all(size) else np.zeros(
        size, data.dtype)
    out = np.array(view)
    return _bfloat16(out) if bfloat else out


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: bytes, archive: zipfile.ZipFile, prefix: str) -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8")
        self._archive, self._prefix = archive, prefix
        self._storages: dict[str, tuple] = {}

    def find_class(self, module: str, name: str) -> object:
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
            return _rebuild_tensor
        if module in ("torch", "torch.storage") and name in _STORAGE_DTYPES:
            return _StorageType(name)
        if module == "torch" and name == "Size":
            return tuple
        if module == "builtins" and name in _SAFE_BUILTINS:
            return getattr(__import__("builtins"), name)
        raise PickleRefused(f"refused global {module}.{name}: only tensors, containers, "
                            "numbers and strings are read (a pickle runs code)")

    def persistent_load(self, pid: object) -> tuple:
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType)):
            raise PickleRefused(f"unknown persistent id {str(pid)[:60]}")
        key = str(pid[2])
        if key not in self._storages:
            try:
                raw = self._archive.read(f"{self._prefix}data/{key}")
            except KeyError:
                raise PickleRefused(f"storage {key} missing from the archive") from None
            kind = pid[1]
            usable = len(raw) - len(raw) % kind.dtype.itemsize
            data = np.frombuffer(raw[:usable], dtype=kind.dtype)
            self._storages[key] = (data, kind.name == "BFloat16Storage")
        return self._storages[key]


def _prefix(archive: zipfile.ZipFile) -> str:
    pickles = [n for n in archive.namelist() if n.endswith("data.pkl") and n.count("/") <= 1]
    if not pickles:
        raise PickleRefused("not a torch.save archive (no data.pkl)")
    return pickles[0][: -len("data.pkl")]


def load_torch(path: Path) -> object:
    """The object of a torch.save zip file, tensors as numpy arrays.  Raises PickleRefused
    (and OSError when the file cannot be read)."""
    with open_binary(path) as handle:
        blob = handle.read()
    try:
        archive = zipfile.ZipFile(io.BytesIO(blob))
    except zipfile.BadZipFile:
        raise PickleRefused("not a zip archive: only torch.save's zip format (torch >= 1.6) "
                            "is read") from None
    with archive:
        prefix = _prefix(archive)
        info = archive.getinfo(f"{prefix}data.pkl")
        if info.file_size > MAX_PICKLE_BYTES:
            raise PickleRefused(f"data.pkl of {info.file_size:,} bytes is too large")
        try:
            order = archive.read(f"{prefix}byteorder").decode()
        except KeyError:
            order = "little"
        if order != "little":
            raise PickleRefused(f"byte order {order[:10]!r} is not read")
        try:
            return _Unpickler(archive.read(info), archive, prefix).load()
        except PickleRefused:
            raise
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError,
                KeyError, AttributeError, RecursionError, MemoryError) as err:
            raise PickleRefused(f"unreadable pickle: {str(err)[:120]}") from None
