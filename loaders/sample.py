"""Reading whole samples back from the dump by byte offset."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path
from typing import NamedTuple

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


def sample_from(obj: dict, file: str, line: int, texts_only: bool = False) -> Sample:
    """A Sample from a parsed line (without its token table when texts_only)."""
    texts = {k: text_of(obj.get(k)) for k in S.TEXT_KEYS}
    scalars = {}
    for key in S.SCALAR_KEYS:
        try:
            scalars[key] = scalar(obj.get(key))
        except ValueError:
            scalars[key] = math.nan
    lengths = {k: len(v) for k in ALIGNED_KEYS if isinstance(v := obj.get(k), list)}
    tokens = pd.DataFrame() if texts_only else token_table(obj)
    return Sample(file, line, obj[S.STEP], texts, scalars, tokens, lengths)


class Location(NamedTuple):
    """Where a sample's line is, as the summary frame records it."""
    file: str
    line: int
    offset: int
    nbytes: int
    step: int


def read_samples(root: Path, locations: list[Location],
                 texts_only: bool = False) -> dict[tuple[str, int], Sample]:
    """Samples at the given locations, read in file order with one open per file.

    With texts_only the token tables are left empty, which is several times faster.
    """
    found = {}
    ordered = sorted(locations, key=lambda loc: (loc.file, loc.offset))
    for file, group in groupby(ordered, key=lambda loc: loc.file):
        group = list(group)
        try:
            with open(root / file, "rb") as handle:
                for loc in group:
                    handle.seek(loc.offset)
                    found[(file, loc.line)] = _read_one(handle.read(loc.nbytes), loc,
                                                        texts_only)
        except OSError as err:
            for loc in group:
                found[(file, loc.line)] = Sample(file, loc.line, loc.step,
                                                 error=f"{file}: cannot read ({err.strerror})")
    return found


def _read_one(raw: bytes, loc: Location, texts_only: bool = False) -> Sample:
    try:
        obj = parse_record(raw)
    except BadLine as err:
        return Sample(loc.file, loc.line, loc.step,
                      error=f"{loc.file}:{loc.line}: changed on disk ({err})")
    return sample_from(obj, loc.file, loc.line, texts_only)
