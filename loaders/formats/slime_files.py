"""slime and miles dump files of one rollout, read as one: each rollout sample joined to its
trainer-side row.

`--dump-details D` writes (slime/utils/arguments.py, miles/utils/arguments.py):
- `D/rollout_data/{id}.pt` (`eval_{id}.pt` for evaluation): text, reward, status, group;
- slime: `D/train_data/{id}.pt`, format 2 (slime/observability/train_data_utils.py
  `_build_dump_payload`): one `samples` list gathered over the DP shards, each sample with
  `rollout_position` (its index in the rollout file's `samples`; exact) and `sample_index`
  (= `Sample.index`; the fallback);
- miles: `D/train_data/{id}_{rank}.pt`, one file a rank (loaders.formats.miles).

The files of one rollout id form a group.  Its home file (the rollout file, else the slime
train file, else the lowest-ranked miles file) returns every sample of the group; the others
return none.  Each file's stat is the group's (loaders.index.refresh), so a train file that
lands after its rollout file makes the whole group read again.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from loaders.formats import miles
from loaders.parse.repair import Parsed
from loaders.parse.torch_pickle import PickleRefused, load_torch

_ROLLOUT = re.compile(r"(eval_)?(\d+)\.pt")
_TRAIN = re.compile(r"(\d+)(?:_(\d+))?\.pt")
JOIN_KEYS = ("rollout_position", "sample_index")  # slime format 2, best first


def group_of(path: Path | str, rel: str) -> list[Path | str]:
    """The existing files of path's rollout, home first (path alone when it has none).  A
    partner is looked for only inside the dump dir: rel must hold the file's own folder."""
    if isinstance(path, str) and "://" not in path:  # a chunk's local path
        path = Path(path)
    if not isinstance(path, Path) or rel.count("/") < 1:  # a URL, or a dir walked from
        return [path]  # rollout_data/ or train_data/ itself
    rollout = _ROLLOUT.fullmatch(path.name) if path.parent.name == "rollout_data" else None
    train = _TRAIN.fullmatch(path.name) if path.parent.name == "train_data" else None
    if rollout and rollout.group(1) or not (rollout or train):
        return [path]
    rid = train.group(1) if train else rollout.group(2)
    root = path.parent.parent
    found = [root / "rollout_data" / f"{rid}.pt", root / "train_data" / f"{rid}.pt"]
    # miles writes a file on every rank, 0 to n-1: probed one by one, as a poll stats them
    while (ranked := root / "train_data" / f"{rid}_{len(found) - 2}.pt").is_file():
        found.append(ranked)
    # a partner is never reached through a link: it could lead out of the dump dir
    return [p for p in found if p == path or p.is_file() and not p.is_symlink()]


def read(path: Path | str, rel: str) -> list[dict]:
    """The samples of one dump file, each with its rollout id as `rollout_id`."""
    group = group_of(path, rel)
    path = group[0] if str(group[0]) == str(path) else None
    if path is None:
        return []  # read by its group's home file
    home = _payload(path)
    if "samples" not in home:  # miles' rank files, without their rollout file
        names = [str(p).rsplit("/", 1)[-1] for p in group]
        rows = miles.train_rows([home, *map(_payload, group[1:])], names)
        found = [{**row, "rollout_id": home.get("rollout_id")} for row in rows.rows.values()]
        if rows.notes and found:  # what could not be stitched, said once
            found[0] = Parsed(found[0], rows.notes)
        return found
    samples = [{**s, "rollout_id": home.get("rollout_id")} for s in home["samples"]
               if isinstance(s, dict)]
    if isinstance(path, Path) and path.parent.name == "rollout_data":
        return _joined(samples, group[1:])
    return samples  # a rollout file by URL, or slime's format 2 alone


def _payload(path: Path) -> dict:
    payload = load_torch(path)
    if not isinstance(payload, dict) or not (isinstance(payload.get("samples"), list)
                                             or isinstance(payload.get("rollout_data"), dict)):
        raise PickleRefused("not a slime or miles dump: no samples list or rollout_data")
    return payload


def _joined(samples: list[dict], train_paths: list[Path]) -> list[dict]:
    """samples with each one's trainer row merged in; what could not be joined is said once,
    on the first sample."""
    if not train_paths:
        return samples
    payloads = [_payload(p) for p in train_paths]
    names = [f"train_data/{p.name}" for p in train_paths]
    if "samples" in payloads[0]:
        rows, key, notes = _slime_rows(payloads[0], samples)
    else:
        found = miles.train_rows(payloads, names)
        by_index = {s.get("index"): at for at, s in enumerate(samples)}
        rows = {by_index[i]: row for i, row in found.rows.items() if i in by_index}
        key, notes = "sample_index", found.notes
        notes += _unknown(len(found.rows) - len(rows), "sample_index")
        _raw_rewards(rows, payloads[0].get("rollout_data", {}).get("raw_reward"))
    joined = [_merged(s, rows.get(at), key, names[0] if len(names) == 1 else "train_data")
              for at, s in enumerate(samples)]
    missing = len(samples) - len(rows)
    if missing:
        notes.append(f"{missing} of {len(samples)} rollout samples have no trainer row in "
                     f"{', '.join(names)}: shown without trainer logprobs")
    if notes and joined:
        joined[0] = Parsed(joined[0], notes)
    return joined


def _slime_rows(payload: dict, samples: list[dict]) -> tuple[dict[int, dict], str, list[str]]:
    """Format 2's samples by their rollout position, by the first key that all of them carry."""
    train = [s for s in payload["samples"] if isinstance(s, dict)]
    key = next((k for k in JOIN_KEYS if train and all(miles.whole(s.get(k)) is not None
                                                       for s in train)), None)
    if key is None:
        return {}, "", ["the train file's samples carry neither rollout_position nor "
                        "sample_index: trainer rows kept apart from the rollout samples"]
    at = ({i: i for i in range(len(samples))} if key == "rollout_position"
          else {s.get("index"): i for i, s in enumerate(samples)})
    rows = {at[miles.whole(s[key])]: s for s in train if miles.whole(s[key]) in at}
    _raw_rewards(rows, payload.get("raw_reward"))
    return rows, key, _unknown(len(train) - len(rows), key)


def _raw_rewards(rows: dict[int, dict], raw: object) -> None:
    """raw_reward is stored once for the batch, in rollout order: never by shard row."""
    if isinstance(raw, (list, np.ndarray)):
        for at, row in rows.items():
            if at < len(raw):
                row["raw_reward"] = raw[at]


def _unknown(count: int, key: str) -> list[str]:
    return [f"{count} trainer rows name a {key} the rollout file does not hold"] if count else []


def _merged(sample: dict, row: dict | None, key: str, source: str) -> dict:
    """The rollout sample with the trainer's fields it does not hold itself."""
    if row is None:
        return sample
    extra = {k: v for k, v in row.items() if k not in sample}
    return {**sample, **extra, "joined_by": f"{source} {key}"}
