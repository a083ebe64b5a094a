"""What a file's path tells about its samples."""
from __future__ import annotations

import re
from dataclasses import dataclass

_STEP = re.compile(r"(?:step[_-]?|completions_|^|/)(\d+)(?:/|\.jsonl$|\.parquet$)")
# only the file name decides: a dir called "grpo_validation_ablation" holds training samples
_VALIDATION = re.compile(r"(rank_?val|^val_|^validation)", re.IGNORECASE)


@dataclass(frozen=True)
class FileContext:
    rel: str
    rank: int = -1
    step: int | None = None  # from the file or dir name, for formats whose lines lack it
    validation: bool = False


def context_of(rel: str, rank: int) -> FileContext:
    """Step and split as far as the path tells them."""
    match = _STEP.search(rel)
    return FileContext(rel, rank, int(match.group(1)) if match else None,
                       bool(_VALIDATION.search(rel.rsplit("/", 1)[-1])))
