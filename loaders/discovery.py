"""Finding dump files under a directory, in natural order."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

CACHE_DIR_NAME = ".rl_board_cache"
DUMP_SUFFIX = ".jsonl"
_RANK = re.compile(r"rank[_-]?(?:val[_-]?)?(\d+)", re.IGNORECASE)
_DIGITS = re.compile(r"(\d+)")


@dataclass(frozen=True)
class DumpFile:
    path: Path
    rel: str  # path relative to the dump dir, with forward slashes
    rank: int  # -1 when the file name carries no rank


def natural_key(text: str) -> tuple:
    """Sort key under which rank_2 comes before rank_10."""
    return tuple(int(p) if p.isdigit() else p.lower() for p in _DIGITS.split(text))


def rank_of(name: str) -> int:
    """The data-parallel rank in a file name such as rollout_data_rank_3.jsonl, else -1."""
    match = _RANK.search(name)
    return int(match.group(1)) if match else -1


def discover(root: Path) -> list[DumpFile]:
    """Every *.jsonl under root, recursively, skipping hidden dirs (and so the cache)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.endswith(DUMP_SUFFIX) and not name.startswith("."):
                path = Path(dirpath) / name
                rel = path.relative_to(root).as_posix()
                found.append(DumpFile(path, rel, rank_of(name)))
    return sorted(found, key=lambda f: natural_key(f.rel))


def dump_dirs(root: Path, limit: int = 500) -> list[str]:
    """Dirs under root (root itself as '.') that directly hold dump files: the sub-runs."""
    dirs = sorted({str(Path(f.rel).parent.as_posix()) for f in discover(root)}, key=natural_key)
    return dirs[:limit]
