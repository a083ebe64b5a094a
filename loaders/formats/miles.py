"""miles' per-rank train dumps, as one trainer row a sample.

miles writes `train_data/{id}_{rank}.pt` on every rank (miles/utils/train_dump_utils.py
`save_debug_train_data_for_rank`): `{"rollout_id", "rank", "rollout_data", "cp_rank",
"cp_size", "qkv_format"}`, `rollout_data` holding one value a row per column, and
`sample_indices` naming each row's `Sample.index` (miles/dashboard/dump_reader.py
`load_joined`).  A sample can sit in several rank files: tensor-parallel peers hold the
same row (the first is kept), and context-parallel ranks hold its per-token fields in two
zigzag slices each, stitched back here as miles' `assemble_log_prob_from_cp` does
(miles/backends/training_utils/cp_utils.py).  `raw_reward` is batch-global, in rollout
order: it is never read by row.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# per-token fields a context-parallel rank holds a slice of; the rest are whole
CP_FIELDS = ("log_probs", "rollout_log_probs", "ref_log_probs", "entropy", "ref_entropy",
             "advantages", "returns")
_BATCH_FIELDS = ("raw_reward",)


@dataclass
class TrainRows:
    rows: dict[int, dict] = field(default_factory=dict)  # by Sample.index
    notes: list[str] = field(default_factory=list)


def train_rows(payloads: list[dict], names: list[str]) -> TrainRows:
    """One row a sample index over the rank files' payloads (named for the notes)."""
    out = TrainRows()
    held: dict[int, list[tuple[dict, int]]] = {}  # sample index -> (payload, row)
    for payload, name in zip(payloads, names):
        columns = payload.get("rollout_data")
        indices = columns.get("sample_indices") if isinstance(columns, dict) else None
        if indices is None:
            out.notes.append(f"{name}: no sample_indices, its rows are not joined")
            continue
        for row, index in enumerate(np.asarray(indices).reshape(-1).tolist()):
            held.setdefault(int(index), []).append((payload, row))
    unstitched = 0
    for index, places in held.items():
        row, whole = _row(places)
        out.rows[index] = row
        unstitched += not whole
    if unstitched:
        out.notes.append(f"{unstitched} samples' context-parallel slices could not be "
                         "stitched (a rank file missing): their per-token fields are left out")
    return out


def _row(places: list[tuple[dict, int]]) -> tuple[dict, bool]:
    """The sample's row from its first holder, per-token fields stitched over CP ranks."""
    payload, at = places[0]
    columns = payload["rollout_data"]
    count = len(columns["sample_indices"])
    row = {key: values[at] for key, values in columns.items()
           if key not in _BATCH_FIELDS and key != "sample_indices"
           and isinstance(values, (list, np.ndarray)) and len(values) == count}
    row["sample_index"] = int(np.asarray(columns["sample_indices"]).reshape(-1)[at])
    size = _int(payload.get("cp_size"), 1)
    if size <= 1:
        return row, True
    whole = True
    for name in CP_FIELDS:
        chunks = {_int(p.get("cp_rank"), 0): p["rollout_data"][name][r] for p, r in places
                  if name in p["rollout_data"]}
        if not chunks:
            continue
        stitched = _stitched(chunks, row, size, str(payload.get("qkv_format", "thd")))
        whole &= stitched is not None
        row[name] = stitched
        if stitched is None:
            del row[name]
    return row, whole


def whole(value: object) -> int | None:
    """An integer a torch.save payload holds: a Python or numpy int, or a one-element
    integer array (a tensor as torch_pickle reads it); None for anything else."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iu":
        return int(value.reshape(-1)[0])
    return None


def _int(value: object, default: int) -> int:
    found = whole(value)
    return default if found is None else found


def _stitched(chunks: dict[int, np.ndarray], row: dict, size: int, layout: str
              ) -> np.ndarray | None:
    """One response's values from every CP rank's slices; None when a rank is missing or
    the layout is not `thd` (bshd needs the batch's padded length, which is not dumped)."""
    total = _int(row.get("total_lengths"), -1)
    response = _int(row.get("response_lengths"), -1)
    if layout != "thd" or set(chunks) != set(range(size)) or min(total, response) < 0:
        return None
    out = np.zeros(response, dtype=np.asarray(next(iter(chunks.values()))).dtype)
    for rank, chunk in chunks.items():
        spans = _logit_spans(total, response, rank, size)
        if sum(hi - lo for lo, hi in spans) != len(chunk):
            return None
        taken = 0
        for lo, hi in spans:
            out[lo:hi] = np.asarray(chunk)[taken:taken + hi - lo]
            taken += hi - lo
    return out


def _logit_spans(total: int, response: int, rank: int, size: int) -> list[tuple[int, int]]:
    """Where in the response a CP rank's two chunks fall (thd; logits one position before
    their tokens, as cp_utils.get_logits_and_tokens_offset_with_cp has them)."""
    chunk = (total + 2 * size - 1) // (2 * size)
    start = total - response - 1  # the logit of the first response token
    spans = []
    for lo, hi in ((rank * chunk, (rank + 1) * chunk),
                   ((2 * size - rank - 1) * chunk, (2 * size - rank) * chunk)):
        lo, hi = max(lo, start), min(hi, total - 1)
        if lo < hi:
            spans.append((lo - start, hi - start))
    return spans
