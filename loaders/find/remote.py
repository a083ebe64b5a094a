"""Dump dirs on object storage (s3://, gs://, hdfs://, …) through fsspec.

A URL dump dir is a RemotePath: the few Path methods the data core uses (`/`, name,
parent, is_dir, stat, open) over an fsspec file system.  Discovery lists the prefix once
(the same name rules as the local walk), a stat is the object's size, modification time
and ETag (or generation), and every read is a byte-range read, so growth and rewrites are
told apart as they are on disk.  Credentials come only from each store's standard
environment and config files (AWS_* variables and ~/.aws for S3, Application Default
Credentials for GCS, …): a URL that carries any (user:secret@) is refused.

fsspec and the store's package (s3fs, gcsfs, …) are optional: imported only here, on the
first URL, and a missing one is a one-line message saying what to install.
"""
from __future__ import annotations

import os
import stat as st
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath
from typing import BinaryIO

from loaders.find.reach import PACKAGES, URL, RemoteError, checked_url

__all__ = ["RemoteError", "RemotePath", "as_path", "checked_url", "filesystem", "is_url",
           "open_binary", "stat_of"]

_CHANGE_KEYS = ("ETag", "etag", "generation", "md5Hash", "crc32c", "version_id")
# botocore asks the cloud metadata address (169.254.169.254) for credentials when none are
# set; credentials come from the environment and config files only, so it is off unless the
# operator turned it on (AWS_EC2_METADATA_DISABLED=false for an instance role)
METADATA_SWITCH = "AWS_EC2_METADATA_DISABLED"


def is_url(path: object) -> bool:
    return isinstance(path, RemotePath) or bool(URL.match(str(path)))


def filesystem(url: str):  # noqa: ANN201 - an fsspec AbstractFileSystem
    """The fsspec file system of a URL (one per process and store, fsspec caches them)."""
    scheme = URL.match(url).group(1).lower()
    os.environ.setdefault(METADATA_SWITCH, "true")
    try:
        import fsspec
    except ImportError:
        raise RemoteError(f"{scheme}:// dump dirs need the optional fsspec and "
                          f"{PACKAGES.get(scheme, 'its')} packages (pip install fsspec "
                          f"{PACKAGES.get(scheme, '')})".rstrip() + ")") from None
    try:
        return fsspec.filesystem(scheme)
    except (ImportError, ValueError) as err:
        raise RemoteError(f"{scheme}:// dump dirs need the optional "
                          f"{PACKAGES.get(scheme, scheme)} package ({err})") from None
    except Exception as err:  # noqa: BLE001 - a protocol that needs more than a URL (ftp, zip)
        why = " ".join(str(err).split())[:160]
        raise RemoteError(f"{scheme}:// cannot be opened as a dump dir: "
                          f"{type(err).__name__}: {why}") from None


@dataclass(frozen=True)
class RemoteStat:
    """What refresh reads of a stat: a changed ETag shows as a changed inode."""
    st_size: int
    st_mtime_ns: int
    st_ino: int
    st_mode: int = st.S_IFREG | 0o444

    @property
    def st_ctime_ns(self) -> int:
        return self.st_mtime_ns


def _mtime_ns(info: dict) -> int:
    for key in ("mtime", "LastModified", "last_modified", "updated", "modified", "created"):
        value = info.get(key)
        if isinstance(value, datetime):
            return int(value.timestamp() * 1e9)
        if isinstance(value, (int, float)):
            return int(value * 1e9) if value < 1e11 else int(value * 1e6)
        if isinstance(value, str):
            try:
                return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
                           * 1e9)
            except ValueError:
                continue
    return 0


class RemotePath:
    """A file or dir on object storage, named by its URL."""

    def __init__(self, url: str) -> None:
        self.url = checked_url(url)

    def __str__(self) -> str:
        return self.url

    def __repr__(self) -> str:
        return f"RemotePath({self.url!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RemotePath) and other.url == self.url

    def __hash__(self) -> int:
        return hash(self.url)

    def __truediv__(self, rel: str) -> RemotePath:
        return RemotePath(f"{self.url}/{rel}")

    @property
    def scheme(self) -> str:
        return self.url.split("://", 1)[0]

    @property
    def name(self) -> str:
        return self.url.rsplit("/", 1)[-1]

    @property
    def parent(self) -> RemotePath:
        head = self.url.rsplit("/", 1)[0]
        return self if head.endswith(":/") else RemotePath(head)

    @property
    def parents(self) -> list[RemotePath]:
        out, here = [], self
        while here.parent != here:
            here = here.parent
            out.append(here)
        return out

    def relative_to(self, other: RemotePath) -> PurePosixPath:
        if not self.url.startswith(other.url + "/"):
            raise ValueError(f"{self.url} is not under {other.url}")
        return PurePosixPath(self.url[len(other.url) + 1:])

    def expanduser(self) -> RemotePath:
        return self

    def resolve(self) -> RemotePath:
        return self  # no links on object storage

    def is_symlink(self) -> bool:
        return False

    def is_absolute(self) -> bool:
        return True

    def is_dir(self) -> bool:
        return bool(_asked(self.url, lambda fs: fs.isdir(self.url)))

    def is_file(self) -> bool:
        return bool(_asked(self.url, lambda fs: fs.isfile(self.url)))

    def exists(self) -> bool:
        return self.is_dir() or self.is_file()

    def stat(self) -> RemoteStat:
        info = filesystem(self.url).info(self.url)
        if info.get("type") == "directory":
            raise IsADirectoryError(self.url)
        change = next((str(info[k]) for k in _CHANGE_KEYS if info.get(k)), "")
        return RemoteStat(int(info.get("size") or 0), _mtime_ns(info),
                          zlib.crc32(change.encode()))

    def open(self, mode: str = "rb") -> BinaryIO:
        if mode != "rb":
            raise RemoteError("dump dirs on object storage are read only")
        fs = filesystem(self.url)
        try:  # every read a byte-range request of just what is asked for
            return fs.open(self.url, "rb", cache_type="none")
        except TypeError:
            return fs.open(self.url, "rb")


def _asked(url: str, ask: Callable[[object], object]) -> object:
    """ask(fs); a store's own errors (no credentials, access denied, no such bucket, an
    unreachable endpoint) become one RemoteError line, never a traceback."""
    fs = filesystem(url)
    try:
        return ask(fs)
    except FileNotFoundError:
        return False
    except Exception as err:  # noqa: BLE001 - each store raises its own kinds
        why = " ".join(str(err).split())[:160]
        raise RemoteError(f"cannot reach {url}: {type(err).__name__}: {why}") from None


def as_path(path: object) -> object:
    """A RemotePath for a URL (a str or RemotePath), the path itself otherwise."""
    if isinstance(path, RemotePath):
        return path
    return RemotePath(str(path)) if URL.match(str(path)) else path


def open_binary(path: object) -> BinaryIO:
    """open(path, "rb"), for local paths and URLs alike."""
    path = as_path(path)
    return path.open("rb") if isinstance(path, RemotePath) else open(path, "rb")  # noqa: SIM115


def stat_of(path: object):  # noqa: ANN201 - os.stat_result or RemoteStat
    path = as_path(path)
    return path.stat() if isinstance(path, RemotePath) else os.stat(path)
