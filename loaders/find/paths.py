"""The path policy: which dirs the board may open, and which links it may follow."""
from __future__ import annotations

from pathlib import Path

from loaders.find.reach import NO_REACH, RemoteReach, refusal
from loaders.find.remote import RemoteError, RemotePath, is_url

MAX_PATH_CHARS = 4096  # PATH_MAX on Linux: anything longer is not a path to open
SHOWN_CHARS = 200  # how much of a refused path a message quotes


def resolve_dump_dir(typed: str, root: str | None, allow_file: bool = False,
                     reach: RemoteReach = NO_REACH) -> tuple[Path | None, str | None]:
    """(resolved dir, None) or (None, message).  With a root, only dirs inside it are allowed.

    The path is resolved first, so `..` and symlinks that lead outside the root are refused.
    A path that no file system call can take (a NUL byte, too long, a loop) gets a one-line
    message quoting at most SHOWN_CHARS of it, never a traceback.  A URL opens only when
    `reach` (the operator's URLs) or a URL root allows it (loaders.find.reach), decided
    before anything connects.
    """
    if not typed or not typed.strip():
        return None, "Enter a dump dir."
    if "\x00" in typed or len(typed) > MAX_PATH_CHARS:
        return None, f"Not a usable path: {_shown(typed)}"
    if is_url(typed.strip()) or (root is not None and is_url(root)):
        return _resolve_url(typed.strip(), root, reach)
    try:
        return _resolve(Path(typed.strip()).expanduser(), typed, root, allow_file)
    except (OSError, RuntimeError, ValueError) as err:  # RuntimeError: a symlink loop
        return None, f"Not a usable path: {_shown(typed)} ({type(err).__name__})"


def _resolve(path: Path, typed: str, root: str | None, allow_file: bool
             ) -> tuple[Path | None, str | None]:
    if root is not None:
        base = Path(root).expanduser().resolve()
        path = (base / path).resolve() if not path.is_absolute() else path.resolve()
        if path != base and base not in path.parents:
            return None, f"Refused: {_shown(typed)} is outside the allowed root {base}."
    else:
        path = path.resolve()
    if not (path.is_dir() or (allow_file and path.is_file())):
        return None, f"No such directory: {_shown(str(path))}"
    return path, None


def _resolve_url(typed: str, root: str | None, reach: RemoteReach
                 ) -> tuple[Path | None, str | None]:
    """A URL dump dir (s3://, gs://, hdfs://, …; loaders.find.remote).  With a root, it must
    be a URL prefix and the dir inside it (a path relative to the root is taken as under
    it); `.`/`..` segments and credentials in the URL are refused."""
    try:
        base = RemotePath(root) if root is not None and is_url(root) else None
        if is_url(typed):
            wanted = typed
        elif base is None or typed.startswith(("/", "~")):
            return None, f"Refused: {_shown(typed)} is outside the allowed root {root}."
        else:
            wanted = f"{base.url}/{typed.strip('/')}"
        prefixes = (*reach.prefixes, base.url) if base else reach.prefixes
        refused = refusal(wanted, RemoteReach(reach.operator_urls, prefixes), root)
        if refused:
            return None, _shown(refused)
        path = RemotePath(wanted)
        if not path.is_dir():
            return None, f"No such directory: {_shown(str(path))}"
    except RemoteError as err:
        return None, _shown(str(err))
    return path, None  # type: ignore[return-value]  # a RemotePath stands in for a Path


def _shown(text: str) -> str:
    text = text.replace("\x00", "\\0")
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + f"… ({len(text):,} chars)"


def inside(path: Path, root: Path) -> bool:
    """False for a symlink that leads outside root (so --root cannot be bypassed), and for
    one that leads nowhere: a loop, or a path the system refuses, is no file to read and
    must not stop the walk it is part of."""
    try:
        if not path.is_symlink():
            return True
        target = path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: pathlib's "Symlink loop" before 3.13
        return False
    return target == root or root in target.parents
