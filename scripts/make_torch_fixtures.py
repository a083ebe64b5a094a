"""Write the slime debug-dump fixtures of tests/fixtures/slime once.

    .venv/bin/python scripts/make_torch_fixtures.py            # without torch (the default here)
    python scripts/make_torch_fixtures.py --torch               # with real torch.save

With `--torch` (torch installed) the files are written by torch.save itself.  Without it,
they are written in the layout torch.save writes (torch/serialization.py `_save`): a zip
archive, records stored uncompressed under `<name>/`: `data.pkl` (a protocol-2 pickle whose
storages are persistent ids `("storage", torch.<Type>Storage, key, "cpu", numel)` and whose
tensors reduce to `torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, collections.OrderedDict())`, as torch/_tensor.py `_reduce_ex_internal` does),
`byteorder`, `data/<key>` (the storage's bytes), `version` and `.data/serialization_id`.
The pickle names torch's globals through stand-in modules that exist only while this script
runs; the board's reader never imports them.

The payloads are what slime's writers save (slime/observability/rollout_data_utils.py and
train_data_utils.py): a multi-turn tool rollout whose loss_mask zeroes the tool output.
"""
from __future__ import annotations

import argparse
import io
import pickle
import sys
import types
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "slime"
_TYPES = {np.dtype("float32"): "FloatStorage", np.dtype("int64"): "LongStorage"}


def _stand_ins() -> types.ModuleType:
    torch = types.ModuleType("torch")
    utils = types.ModuleType("torch._utils")

    def _rebuild_tensor_v2(*args: object) -> None:  # only its name is pickled
        raise RuntimeError("stand-in")

    _rebuild_tensor_v2.__module__ = "torch._utils"
    _rebuild_tensor_v2.__qualname__ = "_rebuild_tensor_v2"
    utils._rebuild_tensor_v2 = _rebuild_tensor_v2
    for name in _TYPES.values():
        cls = type(name, (), {"__module__": "torch"})
        setattr(torch, name, cls)
    torch._utils = utils
    sys.modules.update({"torch": torch, "torch._utils": utils})
    return torch


class Tensor:
    """A 1-d tensor as torch pickles it (its own storage, offset 0, contiguous)."""

    def __init__(self, values: list, dtype: str) -> None:
        self.array = np.asarray(values, dtype=dtype)

    def __reduce_ex__(self, protocol: int) -> tuple:
        storage = _Storage(self.array)
        return (sys.modules["torch._utils"]._rebuild_tensor_v2,
                (storage, 0, tuple(self.array.shape), (1,), False, OrderedDict()))


class _Storage:
    def __init__(self, array: np.ndarray) -> None:
        self.array = array


def save_like_torch(obj: object, path: Path) -> None:
    torch = _stand_ins()
    storages: list[np.ndarray] = []

    def persistent_id(item: object) -> tuple | None:
        if isinstance(item, _Storage):
            storages.append(item.array)
            return ("storage", getattr(torch, _TYPES[item.array.dtype]), str(len(storages) - 1),
                    "cpu", item.array.size)
        return None

    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=2)
    pickler.persistent_id = persistent_id
    pickler.dump(obj)
    name = path.stem
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(f"{name}/data.pkl", buf.getvalue())
        archive.writestr(f"{name}/byteorder", sys.byteorder)
        for key, array in enumerate(storages):
            archive.writestr(f"{name}/data/{key}", array.astype(array.dtype.newbyteorder("<"))
                             .tobytes())
        archive.writestr(f"{name}/version", "3\n")
        archive.writestr(f"{name}/.data/serialization_id", "0" * 40)


def payloads(tensor: type) -> dict[str, dict]:
    """rollout_data/3.pt and train_data/3.pt of one multi-turn rollout of two samples."""
    mask = [1, 1, 1, 0, 0, 0, 1, 1]
    samples, train = [], []
    for i in range(2):
        prompt = [{"role": "system", "content": "Use the search tool."},
                  {"role": "user", "content": f"Where is <b>{i}</b>?"}]
        samples.append({
            "group_index": 0, "index": i, "rollout_id": None, "prompt": prompt,
            "tokens": list(range(100, 104)) + list(range(10 + i, 18 + i)),
            "response": "<search>x</search><information>far</information>It is far.",
            "response_length": 8, "label": "far", "reward": {"score": float(i), "fmt": 1.0},
            "loss_mask": mask, "rollout_log_probs": [-0.5] * 8, "remove_sample": False,
            "status": "completed" if i == 0 else "truncated", "metadata": {"src": "nq"},
            "weight_versions": ["1"], "spec_info": {"spec_accept_token_num": 0}})
        train.append({
            "data_parallel_rank": 0, "rollout_position": i,
            "tokens": tensor(list(range(100, 104)) + list(range(10 + i, 18 + i)), "int64"),
            "response_lengths": 8, "total_lengths": 12, "rewards": float(i),
            "loss_masks": tensor(mask, "float32"),
            "log_probs": tensor([-0.5, -0.5, -0.5, 50, 50, 50, -0.5, -0.5], "float32"),
            "ref_log_probs": tensor([-0.6, -0.6, -0.6, -50, -50, -50, -0.6, -0.6], "float32"),
            "rollout_log_probs": tensor([-0.4] * 8, "float32"),
            "advantages": tensor([float(i)] * 8, "float32")})
    return {"rollout_data/3.pt": {"rollout_id": 3, "samples": samples},
            "train_data/3.pt": {"format_version": 2, "rollout_id": 3, "rank": 0,
                                "samples": train, "dp_shards": [{"rank": 0}],
                                "raw_reward": [0.0, 1.0]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--torch", action="store_true", help="write with real torch.save")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if args.torch:
        import torch

        def tensor(values: list, dtype: str) -> object:
            return torch.tensor(values, dtype=getattr(torch, dtype))

        for rel, payload in payloads(tensor).items():
            (args.out / rel).parent.mkdir(parents=True, exist_ok=True)
            torch.save(payload, args.out / rel)
    else:
        for rel, payload in payloads(Tensor).items():
            save_like_torch(payload, args.out / rel)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
