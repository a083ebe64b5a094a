"""An unpickler whose memory grows with the pickle's bytes, never by what an opcode claims.

CPython's C unpickler trusts a pickle in ways a few bytes can turn into gigabytes: LONG_BINPUT
with index 2**31 resizes (and zeroes) the memo array to that many slots, and BINBYTES8 or
BINUNICODE8 allocate the length they claim before reading it.  The pure-Python unpickler in
the standard library (`pickle._Unpickler`) keeps the memo in a dict and reads counted data
from the bytes that are there, so each opcode costs at most ~16 bytes per byte of pickle;
only the opcodes that make a container, a mark, a memo entry or a call's result from a few
bytes (an empty set is 216 bytes, `set()` is 4 bytes of pickle) cost more, and those are
counted here against limits.MAX_CONTAINERS.  The price is speed, a Python call per opcode:
a 22.9 MB slime rollout file reads in ~1.2 s against ~0.23 s with the C unpickler
(benchmarks/bench_pt.py).  So torch_pickle gives a pickle to the C unpickler when
pickle_scan.py vouches for it (every pickle a Pickler wrote: ~0.28 s for that file), and
only any other to this one.
"""
from __future__ import annotations

import pickle
from collections.abc import Callable

from loaders import limits
from loaders.limits import OverBudget

# EMPTY_LIST, EMPTY_DICT, EMPTY_SET, MARK, LIST, DICT, TUPLE, TUPLE1-3, FROZENSET; the memo
# writes PUT, BINPUT, LONG_BINPUT, MEMOIZE; and the calls REDUCE, NEWOBJ, NEWOBJ_EX, OBJ, INST
# (a call of an allowed class with no arguments, `set()`, is 4 bytes and 224)
COUNTED_OPCODES = b"]}\x8f(ldt\x85\x86\x87\x91pqr\x94R\x81\x92oi"


def _counted(load: Callable[[pickle._Unpickler], None]) -> Callable[[BoundedUnpickler], None]:
    def counted(self: BoundedUnpickler) -> None:
        self.containers += 1
        if self.containers > limits.MAX_CONTAINERS:
            raise OverBudget("containers in the pickle", self.containers,
                             limits.MAX_CONTAINERS)
        load(self)
    return counted


class BoundedUnpickler(pickle._Unpickler):  # the Python one on purpose: see the module doc
    """Subclass it as pickle.Unpickler (find_class, persistent_load); load() raises
    OverBudget past MAX_CONTAINERS."""

    dispatch = {**pickle._Unpickler.dispatch,
                **{op: _counted(pickle._Unpickler.dispatch[op]) for op in COUNTED_OPCODES}}
    containers = 0
