"""The stat of a file that is read together with others (a slime rollout and its train files).

Such a file's samples change when any file of its group changes, so the stat the index keeps
for it is the group's: its own size and mtime, the latest ctime of the group, and an inode
that also names every other member's stat.  A member that appears, changes or goes away
changes the inode, and refresh reads the file again.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import xxhash

from loaders.formats import by_path


@dataclass(frozen=True)
class GroupStat:
    """What refresh reads of a stat (as loaders.find.remote.RemoteStat)."""
    st_size: int
    st_mtime_ns: int
    st_ctime_ns: int
    st_ino: int
    st_mode: int


def group_stat(path: Path, rel: str, stat: os.stat_result,
               group: Callable[[Path, str], list[Path]]) -> os.stat_result | GroupStat:
    """stat, made the group's when path is read with other files."""
    others = [(p.name, p.parent.name, p.stat()) for p in group(path, rel) if p != path]
    if not others:
        return stat
    named = repr([(parent, name, s.st_size, s.st_mtime_ns, s.st_ctime_ns, s.st_ino)
                  for name, parent, s in others])
    return GroupStat(stat.st_size, stat.st_mtime_ns,
                     max(stat.st_ctime_ns, *(s.st_ctime_ns for _, _, s in others)),
                     (stat.st_ino ^ xxhash.xxh64_intdigest(named.encode())) & (2**63 - 1),
                     stat.st_mode)


def joined_stat(path: Path | str, rel: str, stat: os.stat_result
                ) -> os.stat_result | GroupStat:
    """A dump file's stat as the index keeps it: its group's, when its format joins files."""
    fmt = by_path(rel)
    if fmt is None or fmt.group is None or not isinstance(path, Path):
        return stat
    return group_stat(path, rel, stat, fmt.group)
