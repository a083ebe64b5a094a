"""One file never takes the loader down: each hostile .pt file here would grow the loader past
several GiB (or end the whole load) if its claims were trusted.  Each is loaded beside good
files in a process under a 2 GiB address-space limit (tests/bomb_files.py): the bomb is one
problem naming its budget, and the good samples load."""
from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pytest
from bomb_files import (
    dump,
    integer,
    load_limited,
    problems_of,
    sample,
    slime_run,
    tensor,
    text,
    write_pt,
    zeros_storage,
)

BOMB = "rollout_data/1.pt"


def _stride_zero(path: Path) -> None:
    """200 samples, each a 1 M-element tensor over one stored value (stride 0): 1.6 GB."""
    one = tensor("0", 1, 1 << 20, 0)
    write_pt(path, dump(sample("log_probs", one) * 200), {"0": bytes(8)})


def _shared_storage(path: Path) -> None:
    """1,000 samples, each a tensor viewing the whole of one 8 MB storage: 8 GB of copies."""
    whole = tensor("0", 1 << 20, 1 << 20, 1)
    write_pt(path, dump(sample("log_probs", whole) * 1000), {"0": bytes(8 << 20)})


def _zip_bomb(path: Path) -> None:
    """A storage that inflates from ~1 MB on disk to 1.06 GiB."""
    zeros_storage(path, "0", (1 << 30) + (64 << 20),
                  dump(sample("log_probs", tensor("0", 1, 1, 1))))


def _laughs(path: Path) -> None:
    """A prompt of 10^8 references to one 1,000-character text (memo GET, 9 levels)."""
    ops = text("ha" * 500) + b"q\x000"  # BINPUT 0, POP
    for level in range(1, 9):  # a list of 10 BINGETs of the level below, BINPUT, POP
        ops += b"](" + (b"h" + bytes([level - 1])) * 10 + b"eq" + bytes([level]) + b"0"
    ops = ops[:-1]  # the last level stays on the stack: it is the prompt
    write_pt(path, dump(sample("prompt", ops)))


def _deep(path: Path) -> None:
    """A sample whose metadata is a list nested 100,000 deep."""
    depth = 100_000
    write_pt(path, dump(sample("metadata", b"]" * depth + b"a" * (depth - 1))))


def _lying_pickle_length(path: Path) -> None:
    """A text whose BINUNICODE8 length says 2^40 bytes, in a 100-byte pickle."""
    lie = b"\x8d" + struct.pack("<Q", 1 << 40) + b"x" * 16
    write_pt(path, dump(sample("prompt", lie)))


def _lying_zip_size(path: Path) -> None:
    """A data.pkl the zip directory says is 64 bytes, holding 2 MB (and a bad CRC)."""
    write_pt(path, dump(sample("prompt", text("x" * (2 << 20)))))
    raw = bytearray(path.read_bytes())
    central = raw.rfind(b"PK\x01\x02", 0, raw.rfind(b"1/data.pkl"))
    struct.pack_into("<I", raw, central + 24, 64)  # the central directory's file size
    path.write_bytes(bytes(raw))


def _set_flood(path: Path) -> None:
    """A data.pkl of 100 M empty sets (216 bytes each, ~21 GB), deflated to ~100 KB."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("1/data.pkl", dump(sample("prompt", b"](" + b"\x8f" * 100_000_000
                                                   + b"e")))
        archive.writestr("1/byteorder", "little")


def _called_set_flood(path: Path) -> None:
    """A data.pkl of 30 M calls set() (BINGET of builtins.set, EMPTY_TUPLE, REDUCE: 4 bytes
    and 224 each, ~6.7 GB), deflated to ~120 KB."""
    called = b"cbuiltins\nset\nq\x000](" + b"h\x00)R" * 30_000_000 + b"e"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("1/data.pkl", dump(sample("prompt", called)))
        archive.writestr("1/byteorder", "little")


def _storage_rebuilt(path: Path) -> None:
    """A storage whose running count of elements made is set (BUILD) to -2^62, then viewed
    by a 2^30-element stride-0 tensor: 8 GB past the element budget if the count were
    believed."""
    made = b"}(" + text("made") + b"](\x8a\x08" + (-(1 << 62)).to_bytes(8, "little",
                                                                      signed=True) + b"eub"
    rebuilt = tensor("0", 1, 1 << 30, 0).replace(b"tQ", b"tQ" + made, 1)
    write_pt(path, dump(sample("log_probs", rebuilt)), {"0": bytes(8)})


@pytest.mark.parametrize(("write", "reason"), [
    (_stride_zero, "over budget: tensor elements"),
    (_shared_storage, "over budget: tensor elements"),
    (_zip_bomb, "over budget: storage bytes"),
    (_laughs, "over budget: text characters"),
    (_deep, "over budget: nesting depth"),
    (_lying_pickle_length, "unreadable pickle"),
    (_lying_zip_size, "unreadable"),
    (_set_flood, "over budget: containers in the pickle"),
    (_called_set_flood, "over budget: containers in the pickle"),
    (_storage_rebuilt, "a pickle changing a Storage"),
])
def test_a_pickle_bomb_is_one_problem_and_the_run_loads(tmp_path, write, reason):
    root = slime_run(tmp_path / "run")
    write(root / BOMB)
    assert (root / BOMB).stat().st_size < 12 << 20  # small on disk, as the issue found them
    summary = load_limited(root)
    assert summary["samples"] == 4
    problems = problems_of(summary, BOMB)
    assert len(problems) == 1 and reason in problems[0], problems


def test_a_storage_within_budget_still_reads(tmp_path):
    """The budgets refuse claims, not files: one tensor over a big storage reads."""
    root = slime_run(tmp_path / "run")
    whole = tensor("0", 1 << 20, 1 << 20, 1)
    write_pt(root / BOMB, dump(sample("log_probs", whole) + sample("reward", integer(1))),
             {"0": bytes(8 << 20)})
    summary = load_limited(root)
    assert summary["samples"] == 6 and problems_of(summary, BOMB) == []


def test_the_zip_bomb_fixture_is_a_bomb(tmp_path):
    """What the zip-bomb case writes inflates past the storage budget from ~1 MB on disk."""
    path = tmp_path / "1.pt"
    zeros_storage(path, "0", 64 << 20, dump(b""))
    info = zipfile.ZipFile(path).getinfo("1/data/0")
    assert info.file_size == 64 << 20 and info.compress_size < 1 << 20


def test_a_memo_index_of_2_31_costs_nothing(tmp_path):
    """LONG_BINPUT 2**31 - 1 (5 bytes) makes the C unpickler size its memo array to 32 GB;
    the scan sends it to the bounded unpickler, whose memo is a dict, and the file is just
    the sample it holds."""
    root = slime_run(tmp_path / "run")
    memo = text("hello") + b"r" + struct.pack("<I", (1 << 31) - 1)
    write_pt(root / BOMB, dump(sample("prompt", memo)))
    summary = load_limited(root)
    assert summary["samples"] == 5 and problems_of(summary, BOMB) == []
