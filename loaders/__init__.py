"""The data core: find, parse, merge and index rollout dumps.  Never imports streamlit.

Names are imported lazily so that parser worker processes, which import loaders.scanner,
do not pay for pandas and pyarrow.
"""
from __future__ import annotations

import importlib

_EXPORTS = {"DumpError": "loaders.run", "Run": "loaders.run", "open_run": "loaders.run",
            "dump_fingerprint": "loaders.run", "Sample": "loaders.sample",
            "dump_dirs": "loaders.discovery"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'loaders' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
