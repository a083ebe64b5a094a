"""What `python -m loaders` prints about a loaded run."""
from __future__ import annotations

from loaders import schema as S
from loaders.index import kernel
from loaders.serve.run import Run


def summary_dict(run: Run, max_problems: int = 50) -> dict:
    """The CLI's JSON object: counts, capped problem list, timing and cache status."""
    flags = run.columns([S.LENGTH_MISMATCH, S.TRUNCATED, S.TRUNCATION_INFERRED])
    return {
        "dir": str(run.root),
        "files": len(run.files),
        "formats": run.formats,
        "steps": len(run.steps),
        "samples": run.size,
        "bad_lines": run.bad_lines,
        "problems": [{"file": p["file"], "line": p["line"], "reason": p["reason"]}
                     for p in run.problems[:max_problems]],
        "problems_total": len(run.problems),
        "notes": run.notes,  # samples held twice with no key to join them
        "nan_values": run.nan_values,
        "length_mismatches": int(flags[S.LENGTH_MISMATCH].sum()),
        "truncated": int(flags[S.TRUNCATED].sum()),
        # of those, how many the length cap inferred: the dump said nothing of how they ended
        "truncated_inferred": int(flags[S.TRUNCATION_INFERRED].sum()),
        "pending_bytes": run.pending_bytes,
        "seconds": round(run.seconds, 4),
        "cache": run.cache,
        "index": str(run.index_path) if run.index_path else None,
        "kernel": kernel.MISSING or "C",  # the index build's loops (loaders/index/kernel.c)
    }


def summary_text(info: dict) -> str:
    """The same summary for a terminal."""
    lines = [
        f"{info['dir']}: {info['samples']} samples, {info['steps']} steps, "
        f"{info['files']} files in {info['seconds']:.2f}s (cache {info['cache']})",
        f"bad lines: {info['bad_lines']}, non-finite values: {info['nan_values']}, "
        f"length mismatches: {info['length_mismatches']}, truncated: {info['truncated']} "
        f"({info['truncated_inferred']} inferred from the length cap)",
    ]
    lines += [f"note: {note}" for note in info["notes"]]
    if info["kernel"] != "C":
        lines.append(f"index kernel: {info['kernel']}")
    if info["pending_bytes"]:
        lines.append(f"pending (half-written) bytes at file ends: {info['pending_bytes']}")
    lines += [f"  {p['file']}:{p['line']}: {p['reason']}" for p in info["problems"]]
    if info["problems_total"] > len(info["problems"]):
        lines.append(f"  ... {info['problems_total'] - len(info['problems'])} more")
    return "\n".join(lines) + "\n"
