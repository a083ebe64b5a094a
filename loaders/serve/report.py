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
        "pending_lines": run.pending_lines,  # each file's half-written last line
        # samples kept whose values were read around (non-finite, lists of unequal lengths)
        "read_around": run.read_around.head(max_problems).to_dict("records"),
        "read_around_total": len(run.read_around),
        "seconds": round(run.seconds, 4),
        "cache": run.cache,
        "index": str(run.index_path) if run.index_path else None,
        "kernel": kernel.MISSING or "C",  # the index build's loops (loaders/index/kernel.c)
    }


def summary_text(info: dict) -> str:
    """The same summary for a terminal, every name and reason printable (shown)."""
    lines = [
        f"{shown(info['dir'])}: {info['samples']} samples, {info['steps']} steps, "
        f"{info['files']} files in {info['seconds']:.2f}s (cache {info['cache']})",
        f"bad lines: {info['bad_lines']}, non-finite values: {info['nan_values']}, "
        f"length mismatches: {info['length_mismatches']}, truncated: {info['truncated']} "
        f"({info['truncated_inferred']} inferred from the length cap)",
    ]
    lines += [f"note: {shown(note)}" for note in info["notes"]]
    if info["kernel"] != "C":
        lines.append(f"index kernel: {info['kernel']}")
    if info["pending_bytes"]:
        lines.append(f"pending (half-written) bytes at file ends: {info['pending_bytes']}")
        lines += [f"  {shown(p['file'])}:{p['line']}: {p['bytes']} bytes of a half-written line"
                  for p in info["pending_lines"]]
    lines += _listed(info["problems"], info["problems_total"])
    if info["read_around_total"]:
        lines.append("samples kept, values read around:")
        lines += _listed(info["read_around"], info["read_around_total"])
    return "\n".join(lines) + "\n"


def _listed(found: list[dict], total: int) -> list[str]:
    """`file:line: reason` a row, then how many more the list leaves out."""
    out = [f"  {shown(p['file'])}:{p['line']}: {shown(p['reason'])}" for p in found]
    if total > len(found):
        out.append(f"  ... {total - len(found)} more")
    return out


def shown(text: str) -> str:
    """The text with every character a terminal would act on (a control or format
    character: an escape sequence, a bidi override) written as its escape, so a file name
    prints as it is, never clears the screen or reads backwards."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in str(text))
