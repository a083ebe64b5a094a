"""Reading whole samples back from the dump by byte offset (or Parquet row).

What is read back is checked against what the index recorded (the line still sits between
two line ends, its CRC-32 and step are the ones indexed), so a file edited since it was
indexed shows an error and is named in `Samples.stale`, never a second set of numbers.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from loaders import schema as S
from loaders.find.remote import open_binary
from loaders.formats import BY_NAME, read_records, samples_of
from loaders.formats.context import context_of
from loaders.index.summary import scalar
from loaders.parse.arrays import ALIGNED_KEYS
from loaders.parse.columnar import read_rows
from loaders.parse.conversation import turns_of
from loaders.parse.footer import opened, read_checked
from loaders.parse.images import refs_of
from loaders.parse.record import BadLine, line_check, parse_object, record_check
from loaders.parse.text import text_of
from loaders.serve.token_table import token_table


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
    item: int = 0
    stale: bool = False  # its file changed on disk since it was indexed: refresh the run
    turns: list = field(default_factory=list)  # its conversation (loaders.parse.conversation)
    images: list = field(default_factory=list)  # its prompt's images (loaders.parse.images)
    # the TEXT_KEYS its record has no value under (no key, or null): not the same as ""
    absent: frozenset[str] = frozenset()
    # the SCALAR_KEYS its record holds as NaN: the dump's NaN, not a value it lacks
    nan_scalars: frozenset[str] = frozenset()

    @property
    def key(self) -> str:
        return S.sample_key(self.file, self.line, self.item)


class Location(NamedTuple):
    """Where a sample is stored, as the summary frame records it."""
    file: str
    line: int
    offset: int
    nbytes: int
    step: int
    item: int = 0
    check: int | None = None  # schema.LINE_CHECK as indexed; None skips the comparison


class Samples(dict):
    """read_samples' result: Sample by key, plus the files found changed since indexing."""

    def __init__(self) -> None:
        super().__init__()
        self.stale: set[str] = set()


def sample_from(obj: dict, loc: Location, texts_only: bool = False) -> Sample:
    """A Sample from a normalised record (without its token table when texts_only)."""
    texts = {k: text_of(obj.get(k)) for k in S.TEXT_KEYS}
    scalars = {}
    for key in S.SCALAR_KEYS:
        try:
            scalars[key] = scalar(obj.get(key))
        except ValueError:
            scalars[key] = math.nan
    lengths = {k: len(v) for k in ALIGNED_KEYS if isinstance(v := obj.get(k), list)}
    tokens = pd.DataFrame() if texts_only else token_table(obj)
    absent = frozenset(k for k in S.TEXT_KEYS if obj.get(k) is None)
    nan = frozenset(k for k in S.SCALAR_KEYS if isinstance(v := obj.get(k), float) and v != v)
    return Sample(loc.file, loc.line, obj[S.STEP], texts, scalars, tokens, lengths,
                  item=loc.item, turns=turns_of(obj, pretty_args=True), images=refs_of(obj),
                  absent=absent, nan_scalars=nan)


def read_samples(root: Path, locations: list[Location], formats: dict[str, str],
                 texts_only: bool = False) -> Samples:
    """Samples at the given locations by key, read in file order with one open per file.

    With texts_only the token tables are left empty, which is several times faster.
    """
    found = Samples()
    ordered = sorted(locations, key=lambda loc: (loc.file, loc.offset, loc.item))
    for file, group in groupby(ordered, key=lambda loc: loc.file):
        fmt = formats.get(file, "native")
        for loc, sample in _read_file(root / file, list(group), fmt, texts_only):
            found[S.sample_key(loc.file, loc.line, loc.item)] = sample
            if sample.stale:
                found.stale.add(loc.file)
    return found


def _read_file(path: Path, group: list[Location], fmt: str, texts_only: bool) -> list:
    checks: list[int | None] = [None] * len(group)
    try:
        if fmt == "board_parquet":  # by row group: one sample decompresses one group
            records, checks = zip(*read_rows(path, [loc.offset for loc in group]))
        elif BY_NAME[fmt].tabular:
            records = _read_rows(path, group[0].file, [loc.offset for loc in group], fmt)
        else:
            records = _read_lines(path, group)
    except (OSError, IndexError, ValueError) as err:  # ValueError: Arrow's ArrowInvalid
        reason = getattr(err, "strerror", None) or str(err)
        return [(loc, _failed(loc, f"{loc.file}: cannot read ({reason})")) for loc in group]
    return [(loc, _sample_of(record, loc, fmt, texts_only, check))
            for loc, record, check in zip(group, records, checks)]


def _read_lines(path: Path, group: list[Location]) -> list[bytes | None]:
    """Each location's line, or None where it no longer sits between two line ends."""
    with open_binary(path) as handle:  # a local file or a URL (byte-range reads)
        out = []
        for loc in group:
            lead = min(loc.offset, 1)
            handle.seek(loc.offset - lead)
            data = handle.read(lead + loc.nbytes + 1)
            raw, after = data[lead:lead + loc.nbytes], data[lead + loc.nbytes:]
            whole = data[:lead] in (b"", b"\n") and after in (b"", b"\n")
            out.append(raw if whole and len(raw) == loc.nbytes else None)
        return out


def _failed(loc: Location, message: str) -> Sample:
    return Sample(loc.file, loc.line, loc.step, error=message, item=loc.item, stale=True)


def _changed(loc: Location, why: str = "") -> Sample:
    return _failed(loc, f"{loc.file}:{loc.line}: the file changed on disk since it was indexed"
                        f"{f' ({why})' if why else ''}; refresh to read it again")


def _sample_of(record: bytes | dict | None, loc: Location, fmt: str, texts_only: bool,
               check: int | None = None) -> Sample:
    if record is None or (loc.check is not None and loc.check != (
            _check(record) if check is None else check)):
        return _changed(loc)
    try:
        obj = record if isinstance(record, dict) else parse_object(record)
        samples = samples_of(obj, fmt, context_of(loc.file, -1))
        sample = samples[loc.item]
        if isinstance(sample, BadLine):
            raise sample
    except (BadLine, IndexError) as err:
        return _changed(loc, str(err))
    if sample[S.STEP] != loc.step:
        return _changed(loc, f"step {sample[S.STEP]}, indexed as {loc.step}")
    return sample_from(sample, loc, texts_only)


def _check(record: bytes | dict) -> int:
    return record_check(record) if isinstance(record, dict) else line_check(record)


def _read_rows(path: Path, rel: str, indices: list[int], fmt: str) -> list[dict]:
    """Rows of a Parquet file (records of a format's reader) as dicts, reading it once."""
    if BY_NAME[fmt].reader is not None:
        records = read_records(fmt, path, rel)
        return [records[i] for i in indices]
    with open_binary(path) as source:  # within the budgets first (OverBudget: a ValueError)
        table = read_checked(opened(source))
    return table.take(indices).to_pylist()
