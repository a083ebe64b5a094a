"""Discovery on object storage: one listing of the URL prefix, the local walk's rules.

Hidden names (and so the index cache) are skipped, dump files are *.jsonl and the Parquet
dumps the local walk knows, sorted naturally, the rank read from the name; prime-rl steps
without STABLE are left out when any step has it.  Metric logs on object storage are not
read (the Metrics and Health pages show what the dump itself gives).
"""
from __future__ import annotations

from loaders.find.remote import RemotePath, _asked, filesystem
from loaders.find.walk import (
    _TABLE_DUMP,
    DUMP_SUFFIX,
    STABLE_MARKER,
    DumpFile,
    Listing,
    _named,
    natural_key,
    rank_of,
)


def scan_url(root: RemotePath) -> Listing:
    """Every dump object under root (listed afresh: growth must be seen)."""
    fs = filesystem(root.url)
    fs.invalidate_cache()
    base = fs._strip_protocol(root.url).rstrip("/")
    found = _asked(root.url, lambda fs: fs.find(base, detail=False)) or []
    rels = [p[len(base) + 1:] for p in found if p.startswith(base + "/")]
    rels = [rel for rel in rels if not any(part.startswith(".") for part in rel.split("/"))]
    stable = _stable_steps(rels)
    dumps = []
    for rel in rels:
        name = rel.rsplit("/", 1)[-1]
        if not (name.endswith(DUMP_SUFFIX) or _TABLE_DUMP.search(rel)) or not _named(rel):
            continue
        step_dir = _token_step(rel)
        if step_dir is not None and step_dir[0] in stable and step_dir not in stable[
                step_dir[0]]:
            continue
        dumps.append(DumpFile(root / rel, rel, rank_of(name)))
    return Listing(root, tuple(sorted(dumps, key=lambda f: natural_key(f.rel))), ())


def _token_step(rel: str) -> tuple[str, str] | None:
    """(token_exports dir, step dir) of a prime-rl export, else None."""
    parts = rel.split("/")
    for i, part in enumerate(parts[:-2]):
        if part == "token_exports":
            return "/".join(parts[: i + 1]), parts[i + 1]
    return None


def _stable_steps(rels: list[str]) -> dict[str, set[tuple[str, str]]]:
    """By token_exports dir, its step dirs marked STABLE (dirs with none are absent)."""
    out: dict[str, set[tuple[str, str]]] = {}
    for rel in rels:
        if rel.endswith("/" + STABLE_MARKER) and (step := _token_step(rel)) is not None:
            out.setdefault(step[0], set()).add(step)
    return out
