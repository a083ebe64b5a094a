"""The data core: find, parse, index and serve rollout dumps.  Never imports streamlit.

The provider's names (open_run, Run, Sample, DumpError) are imported eagerly, except in
multiprocessing children: the parser workers unpickle loaders.index.pool.scan_chunk, which
imports this package first, and they must not pay for pandas.  There the names resolve on
first use instead.
"""
from __future__ import annotations

import importlib
import multiprocessing
import os

# NumPy's OpenBLAS starts a thread a core at import that spins ~0.1 s of CPU waiting for work,
# beside the parser's workers on the same cores (7 % of the medium dump's index); nothing
# here does linear algebra worth a thread.  Only before NumPy is imported (the CLI, a worker
# it starts); scripts/serve.py sets it for the board's server.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

_EXPORTS = {"DumpError": "loaders.serve.open_run", "Run": "loaders.serve.run",
            "open_run": "loaders.serve.open_run", "Sample": "loaders.serve.sample"}
__all__ = sorted(_EXPORTS)

if multiprocessing.parent_process() is None:
    from loaders.serve.open_run import DumpError as DumpError
    from loaders.serve.open_run import open_run as open_run
    from loaders.serve.run import Run as Run
    from loaders.serve.sample import Sample as Sample


def __getattr__(name: str) -> type | object:
    """The same names, imported on first use inside worker processes."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'loaders' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
