"""Reading one slime rollout `.pt` file: the C unpickler, the bounded pure-Python one, and
the scan that picks between them (loaders/parse/pickle_scan.py).

    python benchmarks/bench_pt.py [--dir benchmarks/out/pt] [--samples 360]
        [--response-tokens 3000] [--repeat 5] [--fork]

Writes rollout_data/7.pt once with torch.save (torch comes with requirements-dev.txt),
shaped like slime's rollout dumps: per sample a two-message prompt, 1,000 prompt and
RESPONSE_TOKENS response token ids (below 151,000: BININT and BININT2), a loss mask of 0/1,
the rollout log-probs, a response text and the small fields.  Then times
torch_pickle.load_torch on it (zip, unpickle, tensors, the payload check; the best and
the median of REPEAT rounds, the ways taking turns) these ways:
  c        the C unpickler on every pickle (no scan: what a bomb would get through), fed
           through a 64 KB buffer as the board feeds it,
  c-bytesio  the same fed a BytesIO, as the reader did before issue 26 §2 (a read call
           an opcode),
  bounded  the pure-Python bounded unpickler on every pickle (issue 26 §2 as merged),
  scan+c   the board's way: the scan, then the C unpickler for a pickle it vouches for,
  scan     the scan alone, on data.pkl.
With --fork, also the C unpickler in a forked child under RLIMIT_AS, its object pickled
back to the parent (the other design weighed for speed).
"""
from __future__ import annotations

import argparse
import io
import os
import pickle
import random
import resource
import statistics
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from loaders.parse import torch_pickle  # noqa: E402
from loaders.parse.pickle_scan import c_may_read  # noqa: E402

WORDS = ("the", "search", "tool", "answer", "<search>", "far", "Paris", "is", "of", "step")
CHILD_MEMORY = 4 << 30


def rollout(samples: int, response: int, seed: int = 0) -> dict:
    rng = random.Random(seed)

    def words(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    return {"rollout_id": 7, "samples": [{
        "group_index": i // 8, "index": i, "rollout_id": 7,
        "prompt": [{"role": "system", "content": words(100)},
                   {"role": "user", "content": words(500)}],
        "tokens": [rng.randrange(151_000) for _ in range(1000 + response)],
        "response": words(response * 2 // 3), "response_length": response, "label": "far",
        "reward": {"score": rng.random(), "fmt": 1.0},
        "loss_mask": [rng.randrange(2) for _ in range(response)],
        "rollout_log_probs": [-rng.random() for _ in range(response)],
        "remove_sample": False, "status": "completed", "metadata": {"src": "nq"},
        "weight_versions": ["7"], "spec_info": {"spec_accept_token_num": 0}}
        for i in range(samples)]}


def timed(ways: dict[str, Callable[[], object]], repeat: int) -> dict[str, list[float]]:
    """Each way's seconds in `repeat` rounds, the ways taking turns in each round (the
    machine's load falls on all of them alike)."""
    times: dict[str, list[float]] = {way: [] for way in ways}
    for _ in range(repeat):
        for way, read in ways.items():
            start = time.perf_counter()
            read()
            times[way].append(time.perf_counter() - start)
    return times


def load_with(path: Path, vouch: Callable[[bytes], bool]) -> object:
    with mock.patch.object(torch_pickle, "c_may_read", vouch):
        return torch_pickle.load_torch(path)


def load_unbuffered(path: Path) -> object:
    def unpickle(data: bytes, archive: zipfile.ZipFile, prefix: str) -> object:
        return torch_pickle._CUnpickler(io.BytesIO(data), archive, prefix).load()

    with mock.patch.object(torch_pickle, "_unpickle", unpickle):
        return torch_pickle.load_torch(path)


def load_in_child(path: Path) -> object:
    """load_torch (C unpickler, no scan) in a forked child under CHILD_MEMORY, its object
    pickled back through a pipe."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY, CHILD_MEMORY))
        with os.fdopen(write_end, "wb") as out:
            pickle.dump(load_with(path, lambda data: True), out, protocol=5)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as back:
        obj = pickle.load(back)
    os.waitpid(pid, 0)
    return obj


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", type=Path, default=ROOT / "benchmarks" / "out" / "pt")
    parser.add_argument("--samples", type=int, default=360)
    parser.add_argument("--response-tokens", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--fork", action="store_true")
    args = parser.parse_args()
    path = args.dir / "rollout_data" / "7.pt"
    try:
        import torch
    except ImportError:
        sys.exit("bench_pt needs torch to write its file: pip install -r requirements-dev.txt")
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(rollout(args.samples, args.response_tokens), path)
    pickled = zipfile.ZipFile(path).read("7/data.pkl")
    megabytes = path.stat().st_size / 1e6
    print(f"{path}: {megabytes:.1f} MB, data.pkl {len(pickled) / 1e6:.1f} MB")
    ways = {"c": lambda: load_with(path, lambda data: True),
            "c-bytesio": lambda: load_unbuffered(path),
            "bounded": lambda: load_with(path, lambda data: False),
            "scan+c": lambda: torch_pickle.load_torch(path),
            "scan": lambda: c_may_read(pickled)}
    if args.fork:
        ways["fork+c"] = lambda: load_in_child(path)
    seconds = timed(ways, args.repeat)
    fastest_c = min(seconds["c"])
    for way, took in seconds.items():
        print(f"{way:9} best {min(took):6.3f} s  median {statistics.median(took):6.3f} s  "
              f"{megabytes / min(took):6.1f} MB/s  {min(took) / fastest_c:5.2f}x the C "
              "unpickler's best")

if __name__ == "__main__":
    main()
