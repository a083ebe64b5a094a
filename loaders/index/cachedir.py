"""Where a dump dir's index lives, and reading and replacing it there without following links.

Whoever can write the dump dir can make ``.rl_board_cache`` a symlink (the board would then
write wherever it points) or a plain file; neither is ever followed or written through: the
index then goes to the user cache dir, with a note saying why.  The dir and the index are
opened with O_NOFOLLOW relative to their parent's descriptor, so a link swapped in after the
check is refused too.
"""
from __future__ import annotations

import hashlib
import os
import secrets
import stat as st
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TypeVar

from loaders.find.walk import CACHE_DIR_NAME

INDEX_NAME = "index.parquet"
TMP_PREFIX, TMP_SUFFIX = ".index-", ".tmp"
# a temp file this old was left by a crash; a younger one may be a concurrent writer's
ORPHAN_SECONDS = 600
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
T = TypeVar("T")


class NoPlace(OSError):
    """The cache dir could not be created or opened (so nothing was written)."""


@dataclass(frozen=True)
class Place:
    path: Path  # the dir the index is read from and written to
    note: str = ""  # why it is not next to the dump, when that is odd (shown as a problem)


def user_cache_dir(root: Path) -> Path:
    """$RL_BOARD_CACHE_DIR/<hash>, else $XDG_CACHE_HOME (or ~/.cache)/rl_logging_board/<hash>."""
    base = os.environ.get("RL_BOARD_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME")
    base_dir = Path(base) if base else Path.home() / ".cache"
    if not os.environ.get("RL_BOARD_CACHE_DIR"):
        base_dir = base_dir / "rl_logging_board"
    return base_dir / hashlib.sha1(str(root).encode()).hexdigest()[:16]


def locate(root: Path) -> Place:
    """Next to the dump when DUMP_DIR/.rl_board_cache is a real dir (or absent) and writable;
    otherwise the user cache dir."""
    if not isinstance(root, Path):  # a URL: kept in the user cache dir, keyed by the URL
        return Place(user_cache_dir(root))
    local = root / CACHE_DIR_NAME
    try:
        mode = os.lstat(local).st_mode
    except FileNotFoundError:
        return Place(local if os.access(root, os.W_OK) else user_cache_dir(root))
    except OSError as err:
        return _elsewhere(root, f"cannot be checked ({err.strerror or err})")
    if st.S_ISLNK(mode):
        return _elsewhere(root, "is a symbolic link, which the board never follows")
    if not st.S_ISDIR(mode):
        return _elsewhere(root, "is not a directory")
    return Place(local if os.access(local, os.W_OK) else user_cache_dir(root))


def _elsewhere(root: Path, why: str) -> Place:
    other = user_cache_dir(root)
    return Place(other, f"{CACHE_DIR_NAME} in the dump dir {why}; the index is kept in {other}")


def _open_dir(path: Path, create: bool) -> int:
    """A descriptor of path, opened without following a link at its last component."""
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    parent = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if create:
            with suppress(FileExistsError):
                os.mkdir(path.name, 0o755, dir_fd=parent)
        return os.open(path.name, _DIR_FLAGS, dir_fd=parent)
    finally:
        os.close(parent)


def read_index(place: Path, read: Callable[[BinaryIO], T], name: str = INDEX_NAME) -> T | None:
    """read(handle) of the index (or another cache file `name`) in `place`; None when there
    is none.  Raises OSError, also for one that is a link or not a regular file (a FIFO
    would block the read)."""
    try:
        dir_fd = _open_dir(place, create=False)
    except FileNotFoundError:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as handle:
        if not st.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{name} is not a regular file")
        return read(handle)


def open_dir(path: Path) -> int:
    """A descriptor of the dir at path, opened without following a link at its last
    component (the caller closes it)."""
    return _open_dir(path, create=False)


def replace_index(place: Path, write: Callable[[BinaryIO], None],
                  name: str = INDEX_NAME) -> Path:
    """Write the index (or another cache file `name`) through a temp file (fsync, rename)
    in `place`.  Raises NoPlace when no temp file can be made there (the dir is a link, a
    file, not writable), else the OSError of the write.  Temp files that crashed writers
    left behind are removed."""
    tmp = f"{TMP_PREFIX}{os.getpid()}-{secrets.token_hex(6)}{TMP_SUFFIX}"
    try:
        dir_fd = _open_dir(place, create=True)
    except OSError as err:
        raise NoPlace(err.errno, f"cannot use {place}: {err.strerror or err}") from None
    try:
        _remove_orphans(dir_fd)
        try:
            # read-write: the writer may keep a descriptor to read back what it wrote
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644,
                         dir_fd=dir_fd)
        except OSError as err:
            raise NoPlace(err.errno, f"cannot write in {place}: {err.strerror}") from None
        try:
            with os.fdopen(fd, "w+b") as handle:
                write(handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        finally:
            with suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)
    return place / name


def replace_first(places: list[Path], write: Callable[[BinaryIO], None]
                  ) -> tuple[Path | None, list[tuple[Path, str]]]:
    """replace_index in the first of places (duplicates skipped) that takes the index: its
    path, or None; and the places where the write failed (a full disk, a quota, an I/O
    error), each with why.  A place with no room for a temp file at all is passed over."""
    failed: list[tuple[Path, str]] = []
    for where in dict.fromkeys(places):
        try:
            return replace_index(where, write), failed
        except NoPlace:
            continue
        except OSError as err:
            failed.append((where, (err.strerror or " ".join(str(err).split()))[:120]))
    return None, failed


def _remove_orphans(dir_fd: int) -> None:
    cutoff = time.time() - ORPHAN_SECONDS
    with os.scandir(dir_fd) as entries:
        for entry in entries:
            if not (entry.name.startswith(TMP_PREFIX) and entry.name.endswith(TMP_SUFFIX)):
                continue
            with suppress(OSError):
                if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.name, dir_fd=dir_fd)
