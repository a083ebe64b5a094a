"""The data core: find, parse, merge and index rollout dumps.  Never imports streamlit."""
from loaders.discovery import dump_dirs
from loaders.run import DumpError, Run, dump_fingerprint, open_run
from loaders.sample import Sample

__all__ = ["DumpError", "Run", "Sample", "dump_dirs", "dump_fingerprint", "open_run"]
