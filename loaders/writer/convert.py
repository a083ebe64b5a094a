"""python -m loaders convert SRC_DIR DST_DIR: a JSONL dump as the board's Parquet dump.

Streams: each source file is read line by line, each line normalised to the board's schema
(whatever trainer format the file is in) and handed to a writer that holds at most
CONVERT_FLUSH_ROWS samples before it writes them out as one file (across steps: a converted
dump is not followed, and a file costs its reader a footer however few rows it holds), so
memory stays bounded by that many samples whatever the dump's size.  Sub-dirs are kept.
Bad lines are counted and named (file:line: reason) and skipped, a sample past the
readers' budgets (loaders/limits.py: a 990-deep extra field) among them; a half-written
last line is left out, as the board does.
Everything is written in a temporary dir beside DST_DIR (`.DST.partial-*`) and moved into
DST_DIR when complete: a conversion that fails or is killed leaves no dump half-written.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from loaders.find.kind import classify
from loaders.find.walk import discover
from loaders.formats import BY_NAME, samples_of
from loaders.formats.context import context_of
from loaders.limits import OverBudget
from loaders.parse.measure import check_payload
from loaders.parse.record import BadLine, parse_object

CONVERT_FLUSH_ROWS = 256  # samples a file (across steps), held before a write: ~32 MB at
# 8k tokens


@dataclass
class Converted:
    files: int = 0
    samples: int = 0
    written: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    bad_lines: int = 0


def convert(src: Path, dst: Path, flush_rows: int = CONVERT_FLUSH_ROWS) -> Converted:
    """Every JSONL dump file under src, as Parquet dump files under dst, which gets them
    only once all are written (see the module's doc)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{dst.name}.partial-", dir=dst.parent))
    umask = os.umask(0)
    os.umask(umask)
    work.chmod(0o777 & ~umask)  # mkdtemp's 0700 would become dst's own mode
    try:
        done = _convert_into(src, work, flush_rows)
        _publish(work, dst)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    done.written = [dst / path.relative_to(work) for path in done.written]
    return done


def _publish(work: Path, dst: Path) -> None:
    """The finished dump moved into dst: one rename when dst is new or empty, else one per
    top-level entry (dst then already holds other files, which stay)."""
    if dst.is_dir() and not any(dst.iterdir()):
        dst.rmdir()
    if not dst.exists():
        os.rename(work, dst)
        return
    for entry in sorted(work.iterdir()):
        os.rename(entry, dst / entry.name)
    work.rmdir()


def _convert_into(src: Path, dst: Path, flush_rows: int) -> Converted:
    from loaders.writer.parquet import ParquetSink  # pyarrow only for this command

    done = Converted()
    for dump in discover(src):
        fmt = classify(dump.path, dump.rel).format
        if fmt not in BY_NAME or BY_NAME[fmt].tabular:
            continue  # metric logs, unknown files, and Parquet already
        out_dir = dst / Path(dump.rel).parent
        out_dir.mkdir(parents=True, exist_ok=True)
        context = context_of(dump.rel, dump.rank)
        sink = ParquetSink(out_dir, max(dump.rank, 0), context.validation, flush_rows,
                           span_steps=True)
        _convert_file(dump.path, dump.rel, fmt, context, sink, done)
        sink.flush()
        done.files += 1
        done.written.extend(sink.written)
    return done


def _convert_file(path: Path, rel: str, fmt: str, context: object, sink: object,
                  done: Converted) -> None:
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.endswith(b"\n"):
                try:
                    parse_object(raw)
                except BadLine:
                    done.problems.append(f"{rel}:{number}: half-written last line left out")
                    return
            if not raw.strip():
                continue
            try:
                samples = samples_of(check_payload(parse_object(raw.rstrip(b"\r\n"))), fmt,
                                     context)
            except (BadLine, OverBudget) as err:  # the writer would recurse into it: skipped
                samples = [BadLine(str(err))]
            for sample in samples:
                if isinstance(sample, BadLine):
                    done.bad_lines += 1
                    done.problems.append(f"{rel}:{number}: {sample}")
                    continue
                sink.add(sample)
                done.samples += 1


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m loaders convert", description=__doc__)
    parser.add_argument("src", type=Path, help="dir of a JSONL dump (searched recursively)")
    parser.add_argument("dst", type=Path, help="dir for the Parquet dump (created)")
    parser.add_argument("--flush-rows", type=int, default=CONVERT_FLUSH_ROWS,
                        help="samples held in memory per file before a write")
    args = parser.parse_args(argv)
    if not args.src.is_dir():
        print(f"error: no such directory: {args.src}", file=sys.stderr)
        return 2
    if args.dst.is_dir() and discover(args.dst):  # a second run would add every sample again
        print(f"error: {args.dst} already holds a dump; convert into an empty dir",
              file=sys.stderr)
        return 2
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        print("error: converting needs pyarrow (pip install pyarrow)", file=sys.stderr)
        return 2
    done = convert(args.src, args.dst, max(1, args.flush_rows))
    for problem in done.problems[:50]:
        print(problem, file=sys.stderr)
    print(f"{done.files} files, {done.samples} samples -> {len(done.written)} Parquet files "
          f"in {args.dst}; {done.bad_lines} bad lines skipped")
    return 0 if done.files else 2
