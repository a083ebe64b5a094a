"""Write a seeded run of samples/generate_alert_runs.py to disk, for the board.

    python samples/write_alert_run.py OUT_DIR [--n 32] [--steps 80] [--fault degeneration]
        [--kind abrupt] [--onset 50]

A dump file per rank through the reference writer (token arrays whose KL, entropy and
mismatch give the generated per-sample means; looping text for the repetitive responses;
`finish_reason` "length" for capped ones, `status` "aborted" for left-out ones) and verl's
metrics log `metrics.jsonl`.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from loaders import schema as S  # noqa: E402
from loaders.writer import DumpWriter  # noqa: E402
from samples.generate_alert_runs import FAULTS, KINDS, TEMPLATE, Run, make_run  # noqa: E402

NAMES = ("golden", "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
         "india", "juliett", "kilo", "lima")  # a common answer's word: digits read alike


def write_run(run: Run, directory: str | Path) -> Path:
    """The run on disk: a dump file per rank (reference writer; token arrays whose KL,
    entropy and mismatch give the frame's per-sample means; looping text for the
    repetitive responses) and verl's metrics log."""
    root = Path(directory)
    rng = np.random.default_rng(0)
    # words of letters: a response clusters with another by its words, its digits read
    # alike (loaders.index.signatures), so "w1", "w2", ... would all be one word
    words = np.array(["".join(chr(97 + (i // 26 ** k) % 26) for k in range(3)) + "x"
                      for i in range(5000)])
    for rank, rows in run.samples.groupby(S.RANK):
        with DumpWriter(root, rank=int(rank)) as writer:
            writer.write_many(_line(row, rng, words) for row in rows.itertuples(index=False))
    if run.metrics is not None:
        lines = [orjson.dumps({"step": int(step), "data": row})
                 for step, row in run.metrics.to_dict("index").items()]
        (root / "metrics.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return root


def _line(row: tuple, rng: np.random.Generator, words: np.ndarray) -> dict:
    length = max(int(getattr(row, S.RESPONSE_LEN)), 1)
    loop = getattr(row, S.REPETITION) >= 0.5
    tokens = (["so", " the", " answer", " is", " 4."] * (length // 5 + 1))[:length] if loop \
        else [f" {w}" for w in rng.choice(words, length)]
    ratio = float(np.sqrt(2 * getattr(row, S.kl_mean(S.K3))))  # k3(r) ≈ r²/2
    logprobs = -rng.random(length)
    template = int(getattr(row, TEMPLATE, -1))
    response = "".join(tokens) if template < 0 else (  # a common answer, its numbers its own
        f"The answer is {rng.integers(1000)}. I am sure, as the {NAMES[template]} rule says: "
        f"{rng.integers(100)} checks passed and nothing else matters here.")
    sample = {"step": int(getattr(row, S.STEP)), "prompt": f"prompt {getattr(row, S.GROUP_ID)}",
              "response": response, "response_tokens": tokens,
              "logprobs": logprobs.round(4), "ref_logprobs": (logprobs - ratio).round(4),
              "reward": float(getattr(row, S.REWARD)),
              "entropy": [round(float(row.entropy_mean), 4)] * length,
              "mismatch_kl": [float(row.mismatch_kl_mean)] * length,
              "finish_reason": "length" if getattr(row, S.TRUNCATED) else "stop"}
    if getattr(row, S.EXCLUDED):
        sample["status"] = "aborted"
    return sample


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--n", type=int, default=32, help="samples a step")
    parser.add_argument("--steps", type=int, default=80)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fault", choices=sorted(FAULTS))
    parser.add_argument("--kind", choices=KINDS, default="abrupt")
    parser.add_argument("--onset", type=int, default=50)
    args = parser.parse_args()
    run = make_run(args.seed, args.n, args.steps, args.fault, args.kind, args.onset)
    print(write_run(run, args.out))


if __name__ == "__main__":
    main()
