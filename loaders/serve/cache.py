"""Whole samples read back from the dump on demand, with small in-memory caches."""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path

import pandas as pd

from loaders.index.previews import Previews
from loaders.serve.locations import Locations
from loaders.serve.sample import Sample, Samples, read_samples

MAX_SAMPLES = 2048
MAX_TEXT_STEPS = 8


class StaleFiles:
    """Files a read found changed since indexing; shared by a run and its parts, whose
    sessions read on many threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: set[str] = set()
        # told of each file when first found stale (the run remembers it on disk)
        self.on_new: Callable[[set[str]], None] | None = None

    def add(self, files: Iterable[str]) -> None:
        with self._lock:
            new = set(files) - self._files
            self._files.update(new)
        if new and self.on_new is not None:
            self.on_new(new)

    def files(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._files)


class Texts(dict):
    """texts' result: full texts by key.  A sample of a file in `stale` (changed on disk
    since indexing) is left out: what it holds now belongs to no row of the index."""

    def __init__(self, texts: dict[str, dict[str, str]], stale: Iterable[str] = ()) -> None:
        super().__init__(texts)
        self.stale = frozenset(stale)


class SampleStore:
    """Samples by key ("file:line[#item]"), read by byte offset, one open per file.

    Shared by every session viewing the run: the LRU dicts are only touched under the lock,
    and files are read outside it, so one session's slow read holds up no other session.
    A stale read (the line's bytes changed since indexing) is never cached, so a file put
    back as it was reads clean again, and it is noted in `stale`.
    """

    def __init__(self, root: Path, samples: pd.DataFrame, formats: dict[str, str],
                 stale: StaleFiles | None = None, previews: Previews | None = None) -> None:
        self.root = root
        self.frame = samples
        self.previews = previews  # where each line is, read for the rows asked
        self.formats = formats
        self.stale = stale if stale is not None else StaleFiles()
        self._lock = threading.RLock()
        self._locations: Locations | None = None
        self._samples: OrderedDict[str, Sample] = OrderedDict()
        self._texts: OrderedDict[int, Texts] = OrderedDict()

    @property
    def locations(self) -> Locations:
        with self._lock:
            if self._locations is None:
                self._locations = Locations(self.frame, self.previews)
            return self._locations

    def step_of(self, key: str) -> int | None:
        """The step of the sample with this key (trained or left out); None when the run
        has no such sample."""
        try:
            return int(self.locations[key].step)
        except KeyError:
            return None

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
            found = read_samples(self.root, locations.of(missing), self.formats)
            self.stale.add(found.stale)
            have.update(found)
            with self._lock:
                self._samples.update((k, have[k]) for k in missing if not have[k].stale)
                _trim(self._samples, MAX_SAMPLES)
        return [have[k] for k in keys]

    def texts(self, step: int, keys: list[str]) -> Texts:
        """Full texts of one step's samples, by key, cached for the last few steps (but not
        a step with stale samples: those are left out and their files named)."""
        with self._lock:
            if step in self._texts:
                self._texts.move_to_end(step)
                return self._texts[step]
        texts = self.texts_of(keys)
        if not texts.stale:
            with self._lock:
                self._texts[step] = texts
                _trim(self._texts, MAX_TEXT_STEPS)
        return texts

    def texts_of(self, keys: list[str]) -> Texts:
        """Full texts of a few samples (a group's answers), read now and not cached: a
        group's lines are a handful of reads, and the LRUs stay for whole samples."""
        found = self.without_tokens(keys)
        return Texts({key: sample.texts for key, sample in found.items()}, found.stale)

    def without_tokens(self, keys: list[str]) -> Samples:
        """A few samples read now, without token arrays, and not cached (a group's texts, a
        table page's image references); those of files changed since indexing are left
        out, their files named in `stale` (here and in the run's StaleFiles)."""
        found = read_samples(self.root, self.locations.of(keys), self.formats,
                             texts_only=True)
        self.stale.add(found.stale)
        for key in [key for key, sample in found.items() if sample.stale]:
            del found[key]
        return found

    def clear(self) -> None:
        """Forget cached samples (benchmarks time cold reads with this)."""
        with self._lock:
            self._samples.clear()
            self._texts.clear()


def _trim(lru: OrderedDict, size: int) -> None:
    while len(lru) > size:
        lru.popitem(last=False)
