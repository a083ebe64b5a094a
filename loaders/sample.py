"""Reading whole samples back from the dump by byte offset."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from loaders import schema as S
from loaders.arrays import ALIGNED_KEYS
from loaders.record import BadLine, parse_record
from loaders.summary import scalar
from loaders.text import text_of
from loaders.tokens import token_table


@dataclass
class Sample:
    file: str
    line: int
    step: int
    texts: dict[str, str] = field(default_factory=dict)  # full prompt, response, ...
    scalars: dict[str, float] = field(default_factory=dict)  # reward, ref_reward, ...
    tokens: pd.DataFrame = field(default_factory=pd.DataFrame)
    raw_lengths: dict[str, int] = field(default_factory=dict)  # before alignment
    error: str | None = None  # set when the line could not be read back

    @property
    def key(self) -> tuple[str, int]:
        return self.file, self.line


def sample_from(obj: dict, file: str, line: int) -> Sample:
    """A Sample from a parsed line."""
    texts = {k: text_of(obj.get(k)) for k in S.TEXT_KEYS}
    scalars = {}
    for key in S.SCALAR_KEYS:
        try:
            scalars[key] = scalar(obj.get(key))
        except ValueError:
            scalars[key] = math.nan
    lengths = {k: len(v) for k in ALIGNED_KEYS if isinstance(v := obj.get(k), list)}
    return Sample(file, line, obj[S.STEP], texts, scalars, token_table(obj), lengths)


def read_samples(root: Path, rows: pd.DataFrame) -> dict[tuple[str, int], Sample]:
    """Samples for summary rows (file, line, offset, nbytes, step), one open per file."""
    found = {}
    for file, group in rows.sort_values([S.FILE, S.OFFSET]).groupby(S.FILE, observed=True):
        with open(root / file, "rb") as handle:
            for line, offset, nbytes, step in zip(group[S.LINE], group[S.OFFSET],
                                                  group[S.NBYTES], group[S.STEP]):
                handle.seek(offset)
                found[(file, line)] = _read_one(handle.read(nbytes), file, line, step)
    return found


def _read_one(raw: bytes, file: str, line: int, step: int) -> Sample:
    try:
        obj = parse_record(raw)
    except BadLine as err:
        return Sample(file, line, step, error=f"{file}:{line}: changed on disk ({err})")
    return sample_from(obj, file, line)
