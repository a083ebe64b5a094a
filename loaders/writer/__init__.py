"""A reference writer for trainers: append one rank's samples to its dump file safely.

Imports neither streamlit nor torch.  Values may be lists, numpy arrays, or anything with
`.tolist()` (torch tensors included).  Each sample is one `os.write` of one whole line on a
file opened with O_APPEND, so a reader never sees half a line for longer than a write takes
(and the board leaves a half-written last line pending until it is complete).

    from loaders.writer import DumpWriter
    writer = DumpWriter("runs/exp1", rank=dist.get_rank())
    writer.write({"step": step, "prompt": p, "response": r, "response_tokens": toks,
                  "logprobs": lp, "ref_logprobs": ref_lp, "reward": score})

A trainer copies this package (`loaders/writer/`: this file, parquet.py and columns.py; not
convert.py, the board's own command) and imports it by the package's name: its files import
each other relatively.  With `format="parquet"` the samples go to columnar files instead
(see parquet.py:
a file per rank and step, written atomically; call `close()` at the end, or use `with`).
"""
from __future__ import annotations

import atexit
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import orjson

_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


def _plain(value: object) -> object:
    """Tensors and arrays as lists; non-finite floats as null (valid JSON for every reader)."""
    if hasattr(value, "tolist") and not isinstance(value, (list, tuple, str, bytes)):
        value = value.tolist()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def encode(sample: Mapping) -> bytes:
    """One sample as one JSON line, newline included."""
    return orjson.dumps({k: _plain(v) for k, v in sample.items()}, option=_OPTIONS) + b"\n"


class DumpWriter:
    """Appends samples to DIR/rollout_data_rank_{rank}.jsonl (…_rank_val{rank} for validation),
    or with format="parquet" writes them to DIR/rollout_data_rank_{rank}.step_{step}.*.parquet."""

    def __init__(self, directory: str | Path, rank: int = 0, validation: bool = False,
                 format: str = "jsonl", flush_rows: int | None = None) -> None:  # noqa: A002
        if format not in ("jsonl", "parquet"):
            raise ValueError(f"format must be 'jsonl' or 'parquet', not {format!r}")
        self.path = Path(directory) / (f"rollout_data_rank_val{rank}.jsonl" if validation
                                       else f"rollout_data_rank_{rank}.jsonl")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.sink = None
        if format == "parquet":  # imported here: the jsonl writer needs no pyarrow
            from .parquet import FLUSH_ROWS, ParquetSink

            self.sink = ParquetSink(self.path.parent, rank, validation, flush_rows or FLUSH_ROWS)
            # the samples still held are written when the trainer's process exits normally
            atexit.register(self.sink.flush)

    def write(self, sample: Mapping) -> None:
        """Append one sample (jsonl: as one write of one line; parquet: to the buffer)."""
        self.write_many([sample])

    def flush(self) -> None:
        """Parquet: write the buffered samples as a file now (jsonl writes at once anyway)."""
        if self.sink is not None:
            self.sink.flush()

    def close(self) -> None:
        self.flush()

    def __enter__(self) -> DumpWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def write_many(self, samples: Iterable[Mapping]) -> None:
        """Append samples, one write per line, and flush them to the OS."""
        if self.sink is not None:
            for sample in samples:
                self.sink.add(sample)
            return
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            for sample in samples:
                line = encode(sample)
                written = os.write(fd, line)
                while written < len(line):  # a short write on a full disk or a signal
                    written += os.write(fd, line[written:])
        finally:
            os.close(fd)
