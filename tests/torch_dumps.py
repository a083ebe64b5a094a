"""slime and miles debug dumps written by real torch.save, laid out as their writers lay them.

- rollout data: `{"rollout_id", "samples": [Sample.to_dict()]}` (slime/observability/
  rollout_data_utils.py `save_debug_rollout_data`; the keys of slime/utils/types.py `Sample`,
  its `status` as `Status.value`);
- slime train data, format 2 (slime/observability/train_data_utils.py `_build_dump_payload`):
  one file a rollout, `samples` sorted by `rollout_position`, each with `data_parallel_rank`,
  `sample_index` and the trainer's per-sample values; `raw_reward` once, in rollout order;
- miles train data (miles/utils/train_dump_utils.py `save_debug_train_data_for_rank`): one
  file a rank, `{"rollout_id", "rank", "rollout_data": {column: a value a row}, "cp_rank",
  "cp_size", "qkv_format"}`, rows found by `sample_indices` (= `Sample.index`).

The tensors are what torch makes of a trainer's batch: per-sample views that share one
storage (`split`), a non-contiguous view, bfloat16, float16 and int tensors, and fields that
are plain lists.
"""
from __future__ import annotations

from pathlib import Path

import torch

TOOL_MASK = [1, 1, 1, 0, 0, 0, 1, 1]  # the tool's output (tokens 3-5) is not trained on
STATUSES = ["completed", "truncated", "completed", "aborted"]


def rollout_sample(i: int, n: int = 8, tools: bool = True) -> dict:
    """Sample.to_dict() of sample i of one group: 4 prompt tokens, n response tokens; with
    tools, a chat whose tool output the loss mask leaves out, else a plain prompt."""
    prompt = ([{"role": "system", "content": "Use the search tool."},
               {"role": "user", "content": f"Where is <b>{i}</b>?"}] if tools
              else f"Where is {i}?")
    return {
        "group_index": i // 2, "index": 100 + i, "rollout_id": None, "prompt": prompt,
        "tokens": list(range(100, 104)) + list(range(10 + i, 10 + i + n)),
        "multimodal_inputs": None, "multimodal_train_inputs": None,
        "response": "<search>x</search><information>far</information>It is far.",
        "response_length": n, "label": "far",
        "reward": {"score": float(i % 2), "fmt": 1.0},
        "loss_mask": TOOL_MASK[:n] if tools else [1] * n,
        "weight_versions": ["1"], "rollout_log_probs": [-0.5] * n,
        "remove_sample": False, "status": STATUSES[i % 4], "metadata": {"src": "nq"},
        "non_generation_time": 0.25, "spec_info": {"spec_accept_token_num": 0},
        "prefix_cache_info": {"cached_tokens": 0, "total_prompt_tokens": 4}}


def train_columns(positions: list[int], n: int = 8) -> dict[str, list]:
    """The trainer's per-sample values of the rollout samples at `positions`, as the actor
    holds them: each field one tensor for the batch, split per sample (shared storage)."""
    rows = len(positions)
    # the trainer's logprobs drift from the rollout's -0.5 by 0.01 a token; 50 on the tool
    # tokens, which no statistic may read
    lp = torch.tensor([[50.0 if not TOOL_MASK[j] else -0.5 - 0.01 * j for j in range(n)]] * rows)
    ref = torch.tensor([[-0.6, -0.6, -0.6, -50, -50, -50, -0.6, -0.6][:n]] * rows)
    wide = torch.full((rows, 2 * n), -0.4)  # every other column: a non-contiguous view
    return {
        "tokens": [torch.tensor(list(range(100, 104)) + list(range(10 + p, 10 + p + n)))
                   for p in positions],
        "response_lengths": [n] * rows, "total_lengths": [4 + n] * rows,
        "rewards": [float(p % 2) - 0.5 for p in positions],
        "truncated": [int(STATUSES[p % 4] == "truncated") for p in positions],
        "sample_indices": [100 + p for p in positions],
        "loss_masks": [torch.tensor(TOOL_MASK[:n], dtype=torch.int32) for _ in positions],
        "log_probs": list(lp.reshape(-1).split(n)),
        "ref_log_probs": list(ref.reshape(-1).split(n)),
        "rollout_log_probs": [wide[r, ::2] for r in range(rows)],
        "advantages": [torch.full((n,), float(p % 2) - 0.5, dtype=torch.bfloat16)
                       for p in positions],
        "returns": [torch.full((n,), 0.5, dtype=torch.float16) for _ in positions],
    }


def _save(payload: dict, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(payload, path)
    return path


def rollout_file(root: Path, rollout_id: int, samples: int = 4, tools: bool = True) -> Path:
    return _save({"rollout_id": rollout_id,
                  "samples": [rollout_sample(i, tools=tools) for i in range(samples)]},
                 root / "rollout_data" / f"{rollout_id}.pt")


def slime_train_file(root: Path, rollout_id: int, shards: list[list[int]],
                     keys: tuple[str, ...] = ("partition", "sample_indices")) -> Path:
    """Format 2 from DP shards of rollout positions, as _build_dump_payload builds it.
    `keys`: the id columns the trainer had (partition -> rollout_position)."""
    samples, layout = [], []
    for dp_rank, positions in enumerate(shards):
        columns = train_columns(positions)
        for row, position in enumerate(positions):
            sample = {"data_parallel_rank": dp_rank}
            if "sample_indices" in keys:
                sample["sample_index"] = columns["sample_indices"][row]
            if "partition" in keys:
                sample["rollout_position"] = position
            sample.update({k: v[row] for k, v in columns.items() if k != "sample_indices"})
            samples.append(sample)
        layout.append({"rank": dp_rank, "data_parallel_rank": dp_rank})
    order = next((k for k in ("rollout_position", "sample_index") if k in samples[0]), None)
    if order:
        samples.sort(key=lambda s: s[order])
    count = sum(len(s) for s in shards)
    return _save({"format_version": 2, "rollout_id": rollout_id, "rank": 0,
                  "samples": samples, "dp_shards": layout,
                  "raw_reward": [float(p % 2) for p in range(count)]},
                 root / "train_data" / f"{rollout_id}.pt")


def miles_train_file(root: Path, rollout_id: int, rank: int, positions: list[int],
                     cp: tuple[int, int] = (0, 1), count: int = 4) -> Path:
    """One rank's file; with cp = (cp_rank, cp_size > 1), its per-token fields are that
    rank's zigzag slices (miles/backends/training_utils/cp_utils.py)."""
    columns = train_columns(positions)
    columns["raw_reward"] = [float(p % 2) for p in range(count)]  # batch-global
    if cp[1] > 1:
        for key in ("log_probs", "ref_log_probs", "rollout_log_probs", "advantages",
                    "returns"):
            columns[key] = [cp_slice(v, 12, 8, *cp) for v in columns[key]]
    return _save({"rollout_id": rollout_id, "rank": rank, "rollout_data": columns,
                  "cp_rank": cp[0], "cp_size": cp[1], "qkv_format": "thd"},
                 root / "train_data" / f"{rollout_id}_{rank}.pt")


def cp_slice(values: torch.Tensor, total: int, response: int, cp_rank: int, cp_size: int
             ) -> torch.Tensor:
    """A response's values held by one context-parallel rank (thd): its two zigzag chunks of
    the sequence, as logits (one position earlier than the tokens)."""
    chunk = (total + 2 * cp_size - 1) // (2 * cp_size)
    prompt = total - response
    parts = []
    for lo, hi in ((cp_rank * chunk, (cp_rank + 1) * chunk),
                   ((2 * cp_size - cp_rank - 1) * chunk, (2 * cp_size - cp_rank) * chunk)):
        lo, hi = max(lo, prompt - 1), min(hi, total - 1)
        if lo < hi:
            parts.append(values[lo - (prompt - 1):hi - (prompt - 1)])
    return torch.cat(parts) if parts else values[:0]


def slime_run(root: Path, samples: int = 4) -> Path:
    """A slime dump dir: rollout 3 and its format-2 train file, over two DP shards."""
    rollout_file(root, 3, samples)
    slime_train_file(root, 3, [list(range(0, samples, 2)), list(range(1, samples, 2))])
    return root
