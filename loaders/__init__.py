"""The data core: find, parse, merge and index rollout dumps.  Never imports streamlit."""
from loaders.run import DumpError, Run, open_run
from loaders.sample import Sample

__all__ = ["DumpError", "Run", "Sample", "open_run"]
