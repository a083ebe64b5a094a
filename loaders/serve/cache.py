"""Whole samples read back from the dump on demand, with small in-memory caches."""
from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

import pandas as pd

from loaders import schema as S
from loaders.serve.sample import Location, Sample, read_samples

MAX_SAMPLES = 2048
MAX_TEXT_STEPS = 8


class SampleStore:
    """Samples by key ("file:line[#item]"), read by byte offset, one open per file.

    Shared by every session viewing the run: the LRU dicts are only touched under the lock,
    and files are read outside it, so one session's slow read holds up no other session.
    """

    def __init__(self, root: Path, samples: pd.DataFrame, formats: dict[str, str]) -> None:
        self.root = root
        self.frame = samples
        self.formats = formats
        self._lock = threading.RLock()
        self._locations: dict[str, Location] | None = None
        self._samples: OrderedDict[str, Sample] = OrderedDict()
        self._texts: OrderedDict[int, dict[str, dict[str, str]]] = OrderedDict()

    @property
    def locations(self) -> dict[str, Location]:
        with self._lock:
            if self._locations is None:
                columns = [self.frame[c].tolist() for c in
                           (S.KEY, S.FILE, S.LINE, S.OFFSET, S.NBYTES, S.STEP, S.ITEM)]
                self._locations = {row[0]: Location(*row[1:]) for row in zip(*columns)}
            return self._locations

    def load(self, keys: list[str]) -> list[Sample]:
        """Samples for keys, in the order given."""
        with self._lock:
            have = {k: self._samples[k] for k in keys if k in self._samples}
            for key in have:
                self._samples.move_to_end(key)
        missing = [k for k in keys if k not in have]
        if missing:
            # the result is built from `have`, not the LRU, which may already have dropped
            # some of these (another session, or a step with more than MAX_SAMPLES samples)
            locations = self.locations
            have.update(read_samples(self.root, [locations[k] for k in missing], self.formats))
            with self._lock:
                self._samples.update((k, have[k]) for k in missing)
                _trim(self._samples, MAX_SAMPLES)
        return [have[k] for k in keys]

    def texts(self, step: int, keys: list[str]) -> dict[str, dict[str, str]]:
        """Full texts of one step's samples, by key, cached for the last few steps."""
        with self._lock:
            if step in self._texts:
                self._texts.move_to_end(step)
                return self._texts[step]
        locations = self.locations
        found = read_samples(self.root, [locations[k] for k in keys], self.formats,
                             texts_only=True)
        texts = {key: sample.texts for key, sample in found.items()}
        with self._lock:
            self._texts[step] = texts
            _trim(self._texts, MAX_TEXT_STEPS)
        return texts

    def clear(self) -> None:
        """Forget cached samples (benchmarks time cold reads with this)."""
        with self._lock:
            self._samples.clear()
            self._texts.clear()


def _trim(lru: OrderedDict, size: int) -> None:
    while len(lru) > size:
        lru.popitem(last=False)
