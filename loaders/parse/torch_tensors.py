"""The tensor side of a torch.save file read without torch (torch_pickle.py): storages as
numpy arrays of the archive's bytes, and torch._utils._rebuild_tensor_v2 as a copy of the
view it names, its elements held to limits.MAX_VALUES before the copy is made.
"""
from __future__ import annotations

import numpy as np

from loaders import limits
from loaders.limits import OverBudget

STORAGE_DTYPES = {
    "DoubleStorage": np.float64, "FloatStorage": np.float32, "HalfStorage": np.float16,
    "BFloat16Storage": np.uint16, "LongStorage": np.int64, "IntStorage": np.int32,
    "ShortStorage": np.int16, "CharStorage": np.int8, "ByteStorage": np.uint8,
    "BoolStorage": np.bool_, "UntypedStorage": np.uint8,
}


class PickleRefused(ValueError):
    """A torch file this reader will not or cannot read; the message says why."""


class _Sealed:
    """An object the pickle gets but must not change: BUILD on it would set its attributes
    (a storage's running count of elements made, to let a stride-0 tensor past the budget)."""

    __slots__ = ()

    def __setstate__(self, state: object) -> None:
        raise PickleRefused(f"a pickle changing a {type(self).__name__}")


class StorageType(_Sealed):
    __slots__ = ("name", "dtype")

    def __init__(self, name: str) -> None:
        self.name = name
        self.dtype = np.dtype(STORAGE_DTYPES[name])


class Storage(_Sealed):
    """A storage's items as read, and the file's running count of tensor elements made.  Its
    own class: a tuple the pickle builds cannot pass for it."""

    __slots__ = ("data", "bfloat", "made")

    def __init__(self, data: np.ndarray, bfloat: bool, made: list[int]) -> None:
        self.data, self.bfloat, self.made = data, bfloat, made


def _bfloat16(raw: np.ndarray) -> np.ndarray:
    """bfloat16 bits (the high half of a float32) as float32."""
    return (raw.astype(np.uint32) << 16).view(np.float32)


def rebuild_tensor(storage: Storage, offset: int, size: tuple, stride: tuple, *_: object
                   ) -> np.ndarray:
    if not isinstance(storage, Storage):
        raise PickleRefused("a tensor over something that is not a storage")
    data, bfloat, made = storage.data, storage.bfloat, storage.made
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride) or any(s < 0 for s in size + stride) or offset < 0:
        raise PickleRefused("a tensor with a negative size, stride or offset")
    last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else offset - 1
    if last >= len(data):
        raise PickleRefused(f"a tensor reaching past its storage ({last} >= {len(data)})")
    # each tensor is a copy: a stride-0 view or one storage shared by every sample costs its
    # full size each time, so the file's running total is checked before the copy is made
    made[0] += int(np.prod(size, dtype=np.float64))
    if made[0] > limits.MAX_VALUES:
        raise OverBudget("tensor elements", made[0], limits.MAX_VALUES)
    view = np.lib.stride_tricks.as_strided(data[offset:], size, tuple(
        s * data.itemsize for s in stride), writeable=False) if all(size) else np.zeros(
        size, data.dtype)
    out = np.array(view)
    return _bfloat16(out) if bfloat else out
