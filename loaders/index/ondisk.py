"""The on-disk index: the summary frame as Parquet, with per-file state in its metadata.

One file, ``index.parquet``, holds both, and it is replaced atomically (write to a temp file,
fsync, rename), so a crash leaves the old index or none, never a torn one.  It lives in
``DUMP_DIR/.rl_board_cache/``; when that is not writable, in
``$RL_BOARD_CACHE_DIR`` or ``$XDG_CACHE_HOME/rl_logging_board/`` (default ``~/.cache``),
under a folder named after a hash of the dump dir's absolute path.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from loaders.find.walk import CACHE_DIR_NAME

INDEX_VERSION = 5
INDEX_NAME = "index.parquet"
_META_KEY = b"rl_logging_board"
EDGE_BYTES = 4096
SAMPLED_BLOCKS = 16  # spread between the edges: a rewrite in the middle shows at bounded cost
# file times come from a coarse clock: a write in the same tick as our stat leaves the stat
# unchanged, so a state taken this soon after the file's last change is re-checked by content
RACY_NS = 2_000_000_000
_DIGEST_SIZE = 12


@dataclass
class FileState:
    rel: str
    size: int
    mtime_ns: int
    parsed_until: int
    lines: int
    head_hash: str
    tail_hash: str
    ends_mid_line: bool = False
    pending_bytes: int = 0
    bad_lines: int = 0
    format: str = "native"  # a loaders.formats name, "metrics" or "unknown"
    inode: int = 0  # a file replaced by rename has a new one
    ctime_ns: int = 0  # changes on every write, even when mtime is restored afterwards
    block_hash: str = ""  # SAMPLED_BLOCKS blocks of the parsed part, between the edges
    checked_ns: int = 0  # wall clock when the stat above was taken

    def same_stat(self, stat: os.stat_result) -> bool:
        """The stat says nothing changed (size, mtime, ctime and inode all equal)."""
        return (self.size, self.mtime_ns, self.ctime_ns, self.inode) == (
            stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)

    @property
    def racy(self) -> bool:
        """The file changed so shortly before its stat was taken that a later write in the
        same clock tick would leave the stat as it is: only its content can tell."""
        return max(self.mtime_ns, self.ctime_ns) + RACY_NS > self.checked_ns

    def hashes(self) -> tuple[str, str, str]:
        return self.head_hash, self.tail_hash, self.block_hash


def stat_fields(stat: os.stat_result, checked_ns: int) -> dict:
    """The FileState fields a stat gives."""
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "ctime_ns": stat.st_ctime_ns,
            "inode": stat.st_ino, "checked_ns": checked_ns}


def content_hashes(path: Path, parsed_until: int) -> tuple[str, str, str]:
    """Hashes of the first and last EDGE_BYTES of the parsed part of a file, and of
    SAMPLED_BLOCKS blocks spread evenly between them (all of it, when that is small)."""
    if parsed_until <= 0:  # nothing parsed: nothing to read (the file may be a FIFO)
        return _digest(b""), _digest(b""), _digest(b"")
    with open(path, "rb") as handle:
        head = handle.read(min(EDGE_BYTES, parsed_until))
        handle.seek(max(0, parsed_until - EDGE_BYTES))
        tail = handle.read(min(EDGE_BYTES, parsed_until))
        blocks = hashlib.blake2b(digest_size=_DIGEST_SIZE)
        for start, length in _block_spans(parsed_until):
            handle.seek(start)
            blocks.update(handle.read(length))
    return _digest(head), _digest(tail), blocks.hexdigest()


def _block_spans(parsed_until: int) -> list[tuple[int, int]]:
    """Where the sampled blocks are; fixed by parsed_until, so a later check reads the same."""
    first, last = EDGE_BYTES, parsed_until - EDGE_BYTES
    if last <= first:
        return []
    if last - first <= SAMPLED_BLOCKS * EDGE_BYTES:
        return [(first, last - first)]
    stride = (last - first - EDGE_BYTES) // (SAMPLED_BLOCKS - 1)
    return [(first + i * stride, EDGE_BYTES) for i in range(SAMPLED_BLOCKS)]


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=_DIGEST_SIZE).hexdigest()


def _user_cache_dir(root: Path) -> Path:
    base = os.environ.get("RL_BOARD_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME")
    base_dir = Path(base) if base else Path.home() / ".cache"
    if not os.environ.get("RL_BOARD_CACHE_DIR"):
        base_dir = base_dir / "rl_logging_board"
    return base_dir / hashlib.sha1(str(root).encode()).hexdigest()[:16]


def index_dir(root: Path) -> Path:
    """Where the index of a dump dir lives (next to the dump when it is writable)."""
    local = root / CACHE_DIR_NAME
    if os.access(local if local.exists() else root, os.W_OK):
        return local
    return _user_cache_dir(root)


@dataclass
class Stored:
    frame: pd.DataFrame
    files: dict[str, FileState]
    problems: list[dict]


def load_index(root: Path) -> Stored | None:
    """The stored index of a dump dir, or None when there is none or it is unreadable."""
    path = index_dir(root) / INDEX_NAME
    if not path.exists():
        return None
    try:
        table = pq.read_table(path)
        meta = orjson.loads(table.schema.metadata[_META_KEY])
    except (OSError, KeyError, TypeError, ValueError, pa.ArrowException):
        return None
    if meta.get("version") != INDEX_VERSION:
        return None
    files = {f["rel"]: FileState(**f) for f in meta["files"]}
    return Stored(table.to_pandas(), files, meta["problems"])


def save_index(root: Path, stored: Stored) -> Path | None:
    """Write the index atomically; returns its path, or None when no cache dir is writable."""
    meta = {"version": INDEX_VERSION, "files": [asdict(f) for f in stored.files.values()],
            "problems": stored.problems}
    table = pa.Table.from_pandas(stored.frame, preserve_index=False)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                           _META_KEY: orjson.dumps(meta)})
    target_dir = index_dir(root)
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".index-", suffix=".tmp", dir=target_dir)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "wb") as handle:
            pq.write_table(table, handle, compression="zstd")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target_dir / INDEX_NAME)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target_dir / INDEX_NAME
