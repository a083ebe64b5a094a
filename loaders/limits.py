"""The budgets every reader works under: what one file may make the board allocate or spend.

A dump dir is data from a training job, not from a trusted user, and one file must never take
the server down: a pickle or Parquet footer can claim a billion rows in a few kilobytes.  Each
reader checks the file's own claims (sizes in a zip directory, rows and byte sizes in a
Parquet footer, the shape of a tensor) against these numbers *before* it allocates; a file
past one is one problem, "over budget: <what>", with its file, and the rest of the run loads.

The numbers leave room for the largest real dumps we know of (a slime train dump of 512
samples x 8k tokens x 8 tensors is ~34 M elements, a TRL completions file a few thousand
rows, a board Parquet dump ~64 k rows a file) and stay well under a 6 GiB server.  The tests
behind them run each hostile file in a loader process under a 2 GiB address-space limit:
tests/loaders/test_reliability_budgets.py (.pt),
tests/loaders/test_reliability_parquet_budgets.py (Parquet); tests/pages/test_reliability_nesting.py
(depth) and tests/pages/test_search_budget.py with tests/browser/test_browser_search.py (the
search's time).
"""
from __future__ import annotations

# --- torch.save (.pt) files: loaders/parse/torch_pickle.py ---
# the whole file is read into memory before its zip directory is looked at
MAX_TORCH_FILE_BYTES = 1 << 30
# data.pkl, decompressed (its size as the zip directory claims it, checked before reading);
# unpickling costs up to ~16 bytes a byte (loaders/parse/bounded_pickle.py), so ~2 GiB at
# most; slime's rollout data of 512 samples x 8k tokens is ~45 MB
MAX_PICKLE_BYTES = 128 << 20
# lists, dicts, sets, tuples, marks, memo entries and results of calls (REDUCE and the like:
# an empty set or OrderedDict) a pickle may make, each up to ~240 bytes from a few bytes of
# pickle: ~500 MB at most; a dump of 4,096 samples makes ~200 k (pickle_scan.py counts them
# before the C unpickler reads, bounded_pickle.py as it reads)
MAX_CONTAINERS = 2 << 20
# all storages of one file together, decompressed (a zip bomb claims its size honestly,
# since zipfile stops at the claimed size: the claim is what is checked)
MAX_STORAGE_BYTES = 1 << 30
# values one file's object makes once written out, a part shared by many samples counted each
# time it appears (a stride-0 tensor, one storage viewed by every sample, a "billion laughs"
# list of lists of the same list all expand when the samples are normalised); 48 M values is
# ~1.5 GiB as Python objects, the most a sample list may cost
MAX_VALUES = 48 << 20
# characters of text, counted the same way (a 1 MB prompt referenced by 10,000 samples)
MAX_TEXT_CHARS = 512 << 20
# nesting of lists, dicts and tuples: orjson, which writes the index, stops at 255, and
# Python's recursion at ~1000 (a 100,000-deep pickle must be one problem, not end the load)
MAX_DEPTH = 200

# --- Parquet files: loaders/parse/footer.py (TRL and other tables, the board's own dumps) ---
# rows a file's footer may claim: a TRL completions file is a step's samples
MAX_PARQUET_ROWS = 4 << 20
# rows one row group may claim (the board writes 64, pyarrow 1 Mi at most; a group is decoded
# at once)
MAX_ROW_GROUP_ROWS = 1 << 20
# decompressed bytes a row group's column chunks may claim together (a TRL step of 1,024
# completions of 32 KB is 32 MB; a 1 GiB text cell is a bomb)
MAX_ROW_GROUP_BYTES = 512 << 20
# rows a file may claim per byte on disk: a real row costs bytes in every column; 2 M rows in
# 30 KB (70 rows a byte) is a bomb, not a dump
MAX_ROWS_PER_BYTE = 4
# a board Parquet file's stored summary (loaders/index/stored_summary.py), unpacked: about
# 1.5 KB a sample, so 64 MB holds a 40,000-row file's; and at most this many times its
# packed bytes (LZ4 packs it 3-4x; a block of zeros would claim 250x)
MAX_SUMMARY_BYTES = 64 << 20
MAX_SUMMARY_RATIO = 32

# --- the Responses / Groups / Prompts / Metrics regex search: pages/figures/search.py ---
# wall time one search may take over every shown text, after which it stops and says so; the
# match runs in the `regex` package with the GIL released, so other sessions and the health
# check are served meanwhile
SEARCH_SECONDS = 2.0


class OverBudget(ValueError):
    """A file past one of these budgets; the message says which and by how much."""

    def __init__(self, what: str, claimed: int | float, budget: int | float) -> None:
        super().__init__(f"over budget: {what} {claimed:,} > {budget:,}")
