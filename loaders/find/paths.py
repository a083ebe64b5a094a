"""The path policy: which dirs the board may open, and which links it may follow."""
from __future__ import annotations

from pathlib import Path


def resolve_dump_dir(typed: str, root: str | None, allow_file: bool = False
                     ) -> tuple[Path | None, str | None]:
    """(resolved dir, None) or (None, message).  With a root, only dirs inside it are allowed.

    The path is resolved first, so `..` and symlinks that lead outside the root are refused.
    """
    if not typed or not typed.strip():
        return None, "Enter a dump dir."
    path = Path(typed.strip()).expanduser()
    if root is not None:
        base = Path(root).expanduser().resolve()
        path = (base / path).resolve() if not path.is_absolute() else path.resolve()
        if path != base and base not in path.parents:
            return None, f"Refused: {typed} is outside the allowed root {base}."
    else:
        path = path.resolve()
    if not (path.is_dir() or (allow_file and path.is_file())):
        return None, f"No such directory: {path}"
    return path, None


def inside(path: Path, root: Path) -> bool:
    """False for a symlink that leads outside root (so --root cannot be bypassed)."""
    if not path.is_symlink():
        return True
    target = path.resolve()
    return target == root or root in target.parents
