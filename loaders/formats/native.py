"""RLLoggingBoard's own format and its forks: already the schema.

Forks add `advantages`, `kl`, `entropy` (per-token lists, kept as token arrays),
`data_source`, `rm_response`, `img_path` (kept as text) and write `values: null` without a
critic.  Validation files (rollout_data_rank_val{N}.jsonl) or lines with `validation: true`
are kept apart from training samples: the summary reads that flag strictly (a string "false"
is not true) and adds the file's, so the line's own value is left as written here.
"""
from __future__ import annotations

from loaders.formats.context import FileContext


def normalize(record: dict, context: FileContext) -> list[dict]:
    return [record]
