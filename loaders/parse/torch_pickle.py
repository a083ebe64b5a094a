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
Every size the file claims is held to loaders/limits.py before it is allocated (the zip
directory's sizes, each tensor's elements; pickle_scan.py and bounded_pickle.py for the
pickle itself), and the object it makes to check_payload (values, text, depth) before
anything expands it; past one, OverBudget names it.

The pickle is read by CPython's C unpickler when pickle_scan vouches for it (no memo index or
length it would believe past the stream's own bytes, containers counted), else by the
bounded pure-Python one: a 22.9 MB slime rollout file loads in ~0.28 s, against ~0.23 s for
the C unpickler unchecked and ~1.2 s for the bounded one alone (`python
benchmarks/bench_pt.py`).
"""
from __future__ import annotations

import collections
import io
import pickle
import zipfile
import zlib
from pathlib import Path

import numpy as np

from loaders import limits
from loaders.find.remote import open_binary
from loaders.limits import OverBudget
from loaders.parse.bounded_pickle import BoundedUnpickler
from loaders.parse.measure import check_payload
from loaders.parse.pickle_scan import c_may_read
from loaders.parse.pil_image import PilImage, latin1_bytes
from loaders.parse.torch_tensors import (
    STORAGE_DTYPES,
    PickleRefused,
    Storage,
    StorageType,
    rebuild_tensor,
)

_SAFE_BUILTINS = frozenset({"set", "frozenset", "complex", "slice"})


class _Restricted:
    """find_class and persistent_load, for either unpickler below."""

    def __init__(self, stream: io.IOBase, archive: zipfile.ZipFile, prefix: str) -> None:
        super().__init__(stream, encoding="utf-8")
        self._archive, self._prefix = archive, prefix
        self._storages: dict[str, Storage] = {}
        self._made = [0]  # tensor elements made so far (a list: rebuild_tensor adds to it)
        self._stored = 0  # storage bytes read so far

    def find_class(self, module: str, name: str) -> object:
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
            return rebuild_tensor
        if module in ("torch", "torch.storage") and name in STORAGE_DTYPES:
            return StorageType(name)
        if module == "torch" and name == "Size":
            return tuple
        if module == "builtins" and name in _SAFE_BUILTINS:
            return getattr(__import__("builtins"), name)
        if module == "PIL.Image" and name == "Image":  # a VLM prompt's image: its pixels only
            return PilImage
        if module == "_codecs" and name == "encode":  # bytes in protocol 2: latin-1 only
            return latin1_bytes
        raise PickleRefused(f"refused global {module}.{name}: only tensors, containers, "
                            "numbers and strings are read (a pickle runs code)")

    def persistent_load(self, pid: object) -> Storage:
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"
                and isinstance(pid[1], StorageType)):
            raise PickleRefused(f"unknown persistent id {str(pid)[:60]}")
        key = str(pid[2])
        if key not in self._storages:
            kind = pid[1]
            data = np.frombuffer(self._storage_bytes(key, kind.dtype.itemsize), kind.dtype)
            self._storages[key] = Storage(data, kind.name == "BFloat16Storage", self._made)
        return self._storages[key]

    def _storage_bytes(self, key: str, itemsize: int) -> bytes:
        """A storage's bytes, whole items only, after its claimed size is within budget
        (zipfile decompresses no more than the claim: a zip bomb is refused unread)."""
        try:
            info = self._archive.getinfo(f"{self._prefix}data/{key}")
        except KeyError:
            raise PickleRefused(f"storage {key} missing from the archive") from None
        self._stored += info.file_size
        if self._stored > limits.MAX_STORAGE_BYTES:
            raise OverBudget("storage bytes", self._stored, limits.MAX_STORAGE_BYTES)
        raw = self._archive.read(info)
        return raw[: len(raw) - len(raw) % itemsize]


class _CUnpickler(_Restricted, pickle.Unpickler):
    """CPython's C unpickler, for a pickle pickle_scan vouches for."""


class _BoundedUnpickler(_Restricted, BoundedUnpickler):
    """The pure-Python unpickler, for any other pickle."""


def _unpickle(data: bytes, archive: zipfile.ZipFile, prefix: str) -> object:
    if c_may_read(data):  # buffered: the C unpickler peeks a block, not a read per opcode
        stream = io.BufferedReader(io.BytesIO(data), 1 << 16)
        return _CUnpickler(stream, archive, prefix).load()
    return _BoundedUnpickler(io.BytesIO(data), archive, prefix).load()


def _prefix(archive: zipfile.ZipFile) -> str:
    pickles = [n for n in archive.namelist() if n.endswith("data.pkl") and n.count("/") <= 1]
    if not pickles:
        raise PickleRefused("not a torch.save archive (no data.pkl)")
    return pickles[0][: -len("data.pkl")]


def load_torch(path: Path) -> object:
    """The object of a torch.save zip file, tensors as numpy arrays.  Raises PickleRefused
    or OverBudget (and OSError when the file cannot be read)."""
    with open_binary(path) as handle:
        blob = handle.read(limits.MAX_TORCH_FILE_BYTES + 1)
    if len(blob) > limits.MAX_TORCH_FILE_BYTES:
        raise OverBudget("file bytes", len(blob), limits.MAX_TORCH_FILE_BYTES)
    try:
        archive = zipfile.ZipFile(io.BytesIO(blob))
    except zipfile.BadZipFile:
        raise PickleRefused("not a zip archive: only torch.save's zip format (torch >= 1.6) "
                            "is read") from None
    try:
        with archive:
            return _load(archive)
    except (PickleRefused, OverBudget):
        raise
    # a record whose bytes or claimed sizes do not match (zipfile checks CRC and lengths)
    except (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError) as err:
        raise PickleRefused(f"unreadable archive: {str(err)[:120]}") from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError,
            KeyError, AttributeError, RecursionError, MemoryError) as err:
        raise PickleRefused(f"unreadable pickle: {str(err)[:120]}") from None


def _load(archive: zipfile.ZipFile) -> object:
    prefix = _prefix(archive)
    info = archive.getinfo(f"{prefix}data.pkl")
    if info.file_size > limits.MAX_PICKLE_BYTES:
        raise OverBudget("data.pkl bytes", info.file_size, limits.MAX_PICKLE_BYTES)
    try:
        order = archive.read(f"{prefix}byteorder").decode()
    except KeyError:
        order = "little"
    if order != "little":
        raise PickleRefused(f"byte order {order[:10]!r} is not read")
    return check_payload(_unpickle(archive.read(info), archive, prefix))
