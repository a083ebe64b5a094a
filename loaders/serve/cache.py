"""Whole samples read back from the dump on demand, with small in-memory caches."""
from __future__ import annotations

from collections import OrderedDict
from functools import cached_property
from pathlib import Path

import pandas as pd

from loaders import schema as S
from loaders.serve.sample import Location, Sample, read_samples

MAX_SAMPLES = 2048
MAX_TEXT_STEPS = 8


class SampleStore:
    """Samples by key ("file:line[#item]"), read by byte offset, one open per file."""

    def __init__(self, root: Path, samples: pd.DataFrame, formats: dict[str, str]) -> None:
        self.root = root
        self.frame = samples
        self.formats = formats
        self._samples: OrderedDict[str, Sample] = OrderedDict()
        self._texts: OrderedDict[int, dict[str, dict[str, str]]] = OrderedDict()

    @cached_property
    def locations(self) -> dict[str, Location]:
        columns = [self.frame[c].tolist() for c in
                   (S.KEY, S.FILE, S.LINE, S.OFFSET, S.NBYTES, S.STEP, S.ITEM)]
        return {row[0]: Location(*row[1:]) for row in zip(*columns)}

    def load(self, keys: list[str]) -> list[Sample]:
        """Samples for keys, in the order given."""
        missing = [k for k in keys if k not in self._samples]
        if missing:
            found = read_samples(self.root, [self.locations[k] for k in missing], self.formats)
            self._samples.update(found)
            while len(self._samples) > MAX_SAMPLES:
                self._samples.popitem(last=False)
        return [self._samples[k] for k in keys]

    def texts(self, step: int, keys: list[str]) -> dict[str, dict[str, str]]:
        """Full texts of one step's samples, by key, cached for the last few steps."""
        if step not in self._texts:
            found = read_samples(self.root, [self.locations[k] for k in keys], self.formats,
                                 texts_only=True)
            self._texts[step] = {key: sample.texts for key, sample in found.items()}
            while len(self._texts) > MAX_TEXT_STEPS:
                self._texts.popitem(last=False)
        return self._texts[step]

    def clear(self) -> None:
        """Forget cached samples (benchmarks time cold reads with this)."""
        self._samples.clear()
        self._texts.clear()
