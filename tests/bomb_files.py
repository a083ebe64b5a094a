"""Hostile files crafted byte by byte, and a loader run under a memory limit to read them.

The pickles are written opcode by opcode (protocol 2, as torch.save writes data.pkl): each is
small on disk and would make the reader allocate gigabytes if it trusted what it says.
"""
from __future__ import annotations

import resource
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import orjson
import torch_dumps
from dump_files import ROOT

MEMORY_LIMIT = 2 << 30  # address space of the loader under test: a bomb that grows fails it


def text(value: str) -> bytes:
    data = value.encode()
    return b"X" + struct.pack("<I", len(data)) + data  # BINUNICODE


def integer(value: int) -> bytes:
    return b"J" + struct.pack("<i", value)  # BININT


def storage(key: str, numel: int) -> bytes:
    """A persistent id ("storage", torch.DoubleStorage, key, "cpu", numel) (BINPERSID)."""
    return (b"(" + text("storage") + b"ctorch\nDoubleStorage\n" + text(key) + text("cpu")
            + integer(numel) + b"tQ")


def tensor(key: str, numel: int, size: int, stride: int) -> bytes:
    """_rebuild_tensor_v2(storage, 0, (size,), (stride,), False)."""
    return (b"ctorch._utils\n_rebuild_tensor_v2\n(" + storage(key, numel) + integer(0)
            + b"(" + integer(size) + b"t(" + integer(stride) + b"t\x89tR")


def sample(key: str, value: bytes) -> bytes:
    """{key: value} (EMPTY_DICT MARK ... SETITEMS)."""
    return b"}(" + text(key) + value + b"u"


def dump(samples: bytes) -> bytes:
    """{"rollout_id": 1, "samples": [...]} as a whole pickle."""
    return (b"\x80\x02}(" + text("rollout_id") + integer(1) + text("samples") + b"](" + samples
            + b"eu.")


def write_pt(path: Path, pickled: bytes, storages: dict[str, bytes] | None = None,
             compress: int = zipfile.ZIP_STORED) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=compress, compresslevel=1) as archive:
        archive.writestr("1/data.pkl", pickled)
        archive.writestr("1/byteorder", "little")
        for key, data in (storages or {}).items():
            archive.writestr(f"1/data/{key}", data)
    return path


def zeros_storage(path: Path, key: str, nbytes: int, pickled: bytes) -> Path:
    """A .pt whose storage `key` is nbytes of zeros, deflated (a zip bomb: ~1/1000 on disk)."""
    write_pt(path, pickled)
    with (zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf,
          zf.open(f"1/data/{key}", "w", force_zip64=True) as out):
        block = bytes(1 << 24)
        for _ in range(nbytes // len(block)):
            out.write(block)
    return path


def slime_run(root: Path) -> Path:
    """A slime dump dir holding 4 good samples (written by torch.save: tests/torch_dumps.py);
    a test adds its hostile file beside them."""
    return torch_dumps.slime_run(root)


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def load_limited(root: Path, *args: str, timeout: int = 180) -> dict:
    """`python -m loaders root --json` in a process that cannot grow past MEMORY_LIMIT: its
    summary, or an AssertionError with what it printed when it failed."""
    out = subprocess.run([sys.executable, "-m", "loaders", str(root), "--json", *args],
                         cwd=ROOT, capture_output=True, timeout=timeout, preexec_fn=_limited)
    assert out.returncode == 0, out.stderr.decode()[-3000:]
    return orjson.loads(out.stdout)


def problems_of(summary: dict, file: str) -> list[str]:
    return [p["reason"] for p in summary["problems"] if p["file"] == file]


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def claim_rows(path: Path, written: int, claimed: int) -> Path:
    """A Parquet file whose footer says `claimed` rows where `written` were written: each
    i64 field holding `written` (Thrift compact: header 0x16, zigzag varint) is rewritten,
    and the footer's length with it.  `written` should be a number no offset or size in the
    footer happens to equal (1234 is)."""
    raw = path.read_bytes()
    size = struct.unpack("<I", raw[-8:-4])[0]
    footer = raw[-8 - size:-8]
    old, new = b"\x16" + _varint(2 * written), b"\x16" + _varint(2 * claimed)
    assert old in footer
    footer = footer.replace(old, new)
    path.write_bytes(raw[:-8 - size] + footer + struct.pack("<I", len(footer)) + b"PAR1")
    return path
