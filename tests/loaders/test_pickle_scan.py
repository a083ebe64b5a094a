"""The scan that lets the C unpickler read a .pt pickle (loaders/parse/pickle_scan.py): it
must find every opcode boundary the unpicklers find, vouch for whatever a Pickler writes,
and not vouch for a claim the C unpickler would believe before reading."""
from __future__ import annotations

import io
import pickle
import pickletools
import random
import struct
import zipfile

import numpy as np
import pytest
from bomb_files import dump, sample, slime_run, text

from loaders import limits
from loaders.limits import OverBudget
from loaders.parse import pickle_scan, torch_pickle
from loaders.parse.bounded_pickle import COUNTED_OPCODES, BoundedUnpickler
from loaders.parse.pickle_scan import c_may_read

# a float whose big-endian BINFLOAT bytes read as LONG_BINPUT 2**31 - 1, and a text holding
# a BINBYTES8 that claims 2**40 bytes: claims only if read from the wrong offset
_TRAP_FLOAT = struct.unpack(">d", b"r\xff\xff\xff\x7f\x00\x00\x00")[0]
_TRAP_TEXT = "x\x8e" + "\x00" * 5 + "\x01\x00\x00"


def _plain_objects() -> list[object]:
    shared = ["shared", 1.5]
    return [
        {"rollout_id": 3, "samples": [{"tokens": list(range(-300, 70_000, 7)),
                                       "log_probs": [_TRAP_FLOAT] * 2500, "mask": [1] * 2100,
                                       "text": _TRAP_TEXT * 50, "short": "é"}]},
        [shared, shared, (), (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4), None, True, False],
        {"bytes": b"\x00" * 300, "big": b"r" * 70_000, "tiny": b"ab", "set": {1, 2},
         "frozen": frozenset({"a"}), "ints": [2 ** 3000, -(2 ** 70), 2 ** 40]},
        [[[["deep"]]]] * 3,
    ]


def _special_positions(data: bytes) -> list[int]:
    """Where genops finds an opcode the scan must look at (counted, with a length or lines,
    or a FRAME), up to where genops stops or fails."""
    found = []
    try:
        for opcode, _, pos in pickletools.genops(data):
            if opcode.name != "STOP" and (ord(opcode.code) in COUNTED_OPCODES
                                          or opcode.name == "FRAME"
                                          or (opcode.arg is not None and opcode.arg.n < 0)):
                found.append(pos)
    except (ValueError, TypeError, IndexError, UnicodeDecodeError, OverflowError):
        pass
    return found


def _scanned_positions(data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[bool, list[int]]:
    seen: list[int] = []
    special = pickle_scan._special

    def recording(data: bytes, pos: int, tally: object) -> int:
        seen.append(pos)
        return special(data, pos, tally)

    monkeypatch.setattr(pickle_scan, "_special", recording)
    return c_may_read(data), seen


@pytest.mark.parametrize("protocol", range(6))
def test_what_a_pickler_writes_is_vouched_for_opcode_by_opcode(protocol, monkeypatch):
    for obj in _plain_objects():
        data = pickle.dumps(obj, protocol=protocol)
        vouched, seen = _scanned_positions(data, monkeypatch)
        assert vouched and seen == _special_positions(data)
        assert pickle.loads(data) == obj


def test_a_bytearray_out_of_protocol_5_is_vouched_for():
    assert c_may_read(pickle.dumps(bytearray(b"abc" * 100), protocol=5))


def _long_binput(index: int) -> bytes:
    return b"r" + struct.pack("<I", index)


FLOATS = b"](" + (b"G" + struct.pack(">d", _TRAP_FLOAT)) * 1500 + b"e"  # a batch and a half


@pytest.mark.parametrize(("stream", "vouched"), [
    (text("x") + _long_binput(0) + b".", True),
    (text("x") + _long_binput(1) + b".", False),  # no memo entry before it: not a Pickler's
    (text("x") + _long_binput((1 << 31) - 1) + b".", False),
    (FLOATS + _long_binput(0) + _long_binput(1) + _long_binput(3) + b".", False),
    (text("x") + b"p0\n.", True),
    (text("x") + b"p99999999\n.", False),
    (text("x") + b"p1_0\n.", False),
    (b"B" + struct.pack("<I", 1 << 31) + b"abcd.", False),  # BINBYTES
    (b"B" + struct.pack("<I", 4) + b"abcd.", True),
    (b"\x8e" + struct.pack("<Q", 1 << 40) + b"ab.", False),  # BINBYTES8
    (b"\x96" + struct.pack("<Q", 1 << 40) + b"ab.", False),  # BYTEARRAY8
    (b"\x8d" + struct.pack("<Q", 1 << 40) + b"ab.", False),  # BINUNICODE8
    (b"X" + struct.pack("<I", 1 << 31) + b"ab.", False),  # BINUNICODE
    (b"\x8b" + struct.pack("<i", -5) + b"ab.", False),  # LONG4, negative
    (b"\x95" + struct.pack("<Q", 1 << 40) + b"N.", False),  # FRAME
    (b"\x95" + struct.pack("<Q", 2) + b"N.", True),
    (FLOATS + b"\x8e" + struct.pack("<Q", 1 << 40) + b".", False),
    (FLOATS + b".", True),
    (FLOATS, False),  # no STOP
    (FLOATS[:-200], False),  # cut inside the run
    (b"N\xff.", False),  # not an opcode
    (b"ctorch\nFloatStorage", False),  # a GLOBAL with no newline after its name
    (b"ctorch\nFloatStorage\n.", True),
])
def test_a_claim_the_c_unpickler_would_believe_is_not_vouched_for(stream, vouched):
    assert c_may_read(stream) is vouched


@pytest.mark.parametrize("protocol", [2, 4])
def test_containers_are_counted_as_the_bounded_unpickler_counts_them(protocol, monkeypatch):
    data = pickle.dumps(_plain_objects(), protocol=protocol)
    bounded = BoundedUnpickler(io.BytesIO(data))
    bounded.load()
    monkeypatch.setattr(limits, "MAX_CONTAINERS", bounded.containers)
    assert c_may_read(data)
    monkeypatch.setattr(limits, "MAX_CONTAINERS", bounded.containers - 1)
    with pytest.raises(OverBudget, match="containers in the pickle"):
        c_may_read(data)


def test_a_flood_of_empty_sets_is_over_budget_before_anything_is_built():
    with pytest.raises(OverBudget, match="containers in the pickle"):
        c_may_read(dump(sample("prompt", b"](" + b"\x8f" * (limits.MAX_CONTAINERS + 1)
                                + b"e")))


@pytest.mark.parametrize("protocol", [0, 2, 4])
def test_mutated_pickles_split_into_the_opcodes_genops_finds(protocol, monkeypatch):
    """Random bytes changed in real pickles: wherever genops still reads opcodes, the scan
    looks at the same ones (a wrong width would show as a different position)."""
    rng = random.Random(protocol)
    base = pickle.dumps(_plain_objects()[1:], protocol=protocol)
    for _ in range(300):
        data = bytearray(base)
        for _ in range(rng.randrange(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        _, seen = _scanned_positions(bytes(data), monkeypatch)
        expected = _special_positions(bytes(data))
        common = min(len(seen), len(expected))
        assert seen[:common] == expected[:common]


def test_slime_files_take_the_c_unpickler_and_read_as_the_bounded_one_does(monkeypatch,
                                                                             tmp_path):
    files = sorted(slime_run(tmp_path).rglob("*.pt"))
    assert files
    for path in files:
        fast = torch_pickle.load_torch(path)
        with monkeypatch.context() as patched:
            patched.setattr(torch_pickle, "c_may_read", lambda data: False)
            slow = torch_pickle.load_torch(path)
        np.testing.assert_equal(fast, slow)
        assert c_may_read(zipfile.ZipFile(path).read(f"{path.stem}/data.pkl"))
