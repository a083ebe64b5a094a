"""Values computed once per key and shared by every thread (every browser session)."""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Memo(Generic[K, V]):
    """A thread-safe cache: the first caller of a key computes it while later callers of the
    same key wait for that result; callers of other keys never wait for it.

    The table lock is only held for dict operations, never while a value is computed, so a
    slow load of one key (a big dump, a session stuck in its progress callback) holds up
    nobody else.  With `size`, the least recently used values are dropped beyond it.
    """

    def __init__(self, size: int | None = None) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._values: OrderedDict[K, V] = OrderedDict()
        self._computing: dict[K, threading.Lock] = {}

    def get(self, key: K, make: Callable[[], V]) -> V:
        """The value of key, computing it with make() when no one has yet."""
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
            gate = self._computing.setdefault(key, threading.Lock())
        with gate:
            with self._lock:
                if key in self._values:  # computed by the caller we waited for
                    return self._values[key]
            return self.put(key, make())

    def recompute(self, key: K, make: Callable[[], V]) -> V:
        """Compute key again and replace its value; readers see the old value meanwhile."""
        with self._lock:
            gate = self._computing.setdefault(key, threading.Lock())
        with gate:
            return self.put(key, make())

    def put(self, key: K, value: V) -> V:
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while self.size is not None and len(self._values) > self.size:
                old, _ = self._values.popitem(last=False)
                self._computing.pop(old, None)
        return value

    def peek(self, key: K) -> V | None:
        """The value, or None when key has none; never computes."""
        with self._lock:
            return self._values.get(key)

    def computed(self) -> list[K]:
        """The keys that have a value now (a copy)."""
        with self._lock:
            return list(self._values)

    def discard(self, key: K) -> None:
        with self._lock:
            self._values.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
