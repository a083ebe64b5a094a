"""Seeded generator of realistic RL rollout dumps: one jsonl file per data-parallel rank.

    python samples/generate_dump.py OUT_DIR [--steps 10 --ranks 2 --samples-per-rank 8
        --max-tokens 256 --seed 0 --group-size 1 --prompts 0] [--start-step N --append]

With --group-size G > 1 each rank's batch is GRPO-shaped: samples_per_rank / G prompts
(drawn from a dataset of --prompts of them, by default twice a step's groups), each
answered G times, with 0/1 correctness rewards drawn from a per-prompt difficulty (so
some groups are always solved, some never, most mixed) and verl's `uid` per group.
    python samples/generate_dump.py samples/demo --demo    # the committed demo dump
    python samples/generate_dump.py OUT_DIR --long-run [--steps 125]
        # a long GRPO run that dumps every step: 1,000 steps x 8 ranks x 128 samples of
        # <= 16 tokens, 20,000 prompts answered 8 times a step (1,024,000 samples, 1.7 GB);
        # a flag given beside it (--steps) overrides its value

Reward rises over the steps (and leans on length late in training), ref_reward stays flat,
and the policy's logprobs drift away from the reference's as training goes on.
"""
from __future__ import annotations

import argparse
import json
import math
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson

try:
    import dump_text as T
except ImportError:  # imported as samples.generate_dump
    from samples import dump_text as T

ARRAYS = ("logprobs", "ref_logprobs", "values", "token_rewards")
DEMO = {"steps": 12, "ranks": 2, "samples_per_rank": 8, "max_tokens": 96, "seed": 7}


@dataclass
class World:
    """What stays fixed across the steps of one run: prompts, text corpus, length cap."""
    pool: list[tuple[str, str]]
    corpus: T.Corpus
    max_tokens: int
    last_step: int  # the step where training progress reaches 1
    difficulty: np.ndarray | None = None  # per prompt, for GRPO groups: pass chance offset


def make_world(seed: int, batch: int, max_tokens: int, last_step: int,
               group_size: int = 1, prompts: int = 0) -> World:
    """`prompts`: the dataset's size for GRPO groups (0: twice a step's groups, at most
    4,096); each step draws its groups' prompts from it."""
    rng = np.random.default_rng([seed, 1])
    if group_size > 1:  # prompts recur across steps, as epochs of a dataset do
        pool = T.make_pool(rng, prompts or max(12, min(4096, 2 * batch // group_size)))
        difficulty = np.random.default_rng([seed, 3]).uniform(-0.45, 1.1, len(pool))
        return World(pool, T.build_corpus(rng), max_tokens, last_step, difficulty)
    pool = T.make_pool(rng, max(12, min(256, batch // 4)))
    return World(pool, T.build_corpus(rng), max_tokens, last_step)


def encode(sample: dict) -> bytes:
    return orjson.dumps(sample, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_APPEND_NEWLINE)


def draw_lengths(rng: np.random.Generator, count: int, max_tokens: int,
                 progress: float) -> tuple[np.ndarray, np.ndarray]:
    """Token counts (right-skewed, growing over training) and which responses hit the cap."""
    low = max(8, max_tokens // 8)
    u = rng.random(count) ** (2.0 - 0.9 * progress)
    lengths = (low + u * (max_tokens - 1 - low)).astype(np.int64)
    truncated = rng.random(count) < 0.05
    return np.where(truncated, max_tokens, lengths), truncated


def draw_rewards(rng: np.random.Generator, lengths: np.ndarray, truncated: np.ndarray,
                 max_tokens: int, progress: float) -> tuple[np.ndarray, np.ndarray]:
    """Rewards: 0/1 correctness or noisy scores; mean 0.2 -> 0.8, longer scores higher late."""
    count = len(lengths)
    mean = 0.2 + 0.6 * progress + 0.4 * progress * (lengths / max_tokens - 0.5)
    scored = np.clip(rng.normal(mean, 0.15), 0.0, 1.0)
    correct = (rng.random(count) < mean).astype(np.float64)
    reward = np.where(rng.random(count) < 0.3, correct, scored)
    reward = np.where(truncated, reward * 0.3, reward)
    ref_scored = np.clip(rng.normal(0.35, 0.12, count), 0.0, 1.0)
    ref_correct = (rng.random(count) < 0.35).astype(np.float64)
    return reward, np.where(rng.random(count) < 0.3, ref_correct, ref_scored)


def token_arrays(rng: np.random.Generator, lengths: np.ndarray, reward: np.ndarray,
                 progress: float) -> dict[str, list[np.ndarray]]:
    """Per-token logprobs, ref_logprobs, values and token_rewards for a batch, per sample."""
    total, ends = int(lengths.sum()), np.cumsum(lengths)
    frac = (np.arange(total) - np.repeat(ends - lengths, lengths) + 1) / np.repeat(lengths, lengths)
    logprobs = -np.minimum(rng.lognormal(-2.5, 1.4, total), 20.0)
    drift = rng.normal(0.0, 0.01 + 0.09 * progress, total)
    spikes = rng.random(total) < 0.004
    drift[spikes] += rng.normal(0.0, 0.5 + 2.0 * progress, int(spikes.sum()))
    ref_logprobs = -np.abs(logprobs - drift)
    start = np.repeat(rng.normal(0.45, 0.05, len(lengths)), lengths)
    target = np.repeat(reward + rng.normal(0.0, 0.1, len(lengths)), lengths)
    noise = rng.normal(0.0, 1.0, total) * (0.02 + 0.08 * (1.0 - frac))
    values = start + (target - start) * frac ** 1.5 + noise
    token_rewards = -0.01 * (logprobs - ref_logprobs)
    token_rewards[ends - 1] += reward
    arrays = (logprobs, ref_logprobs, values, token_rewards)
    return {key: np.split(arr, ends[:-1]) for key, arr in zip(ARRAYS, arrays)}


def group_prompts(world: World, rng: np.random.Generator, count: int, size: int,
                  progress: float, truncated: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(prompt index, 0/1 reward) of count // size groups of `size` answers each."""
    prompts = np.repeat(rng.choice(len(world.pool), size=count // size, replace=False), size)
    chance = np.clip(world.difficulty[prompts] + 0.5 * progress, 0.0, 1.0)
    reward = (rng.random(len(prompts)) < chance).astype(np.float64)
    return prompts, np.where(truncated[: len(prompts)], 0.0, reward)


def make_batch(world: World, rng: np.random.Generator, step: int, count: int,
               group_size: int = 1, rank: int = 0) -> list[dict]:
    """`count` samples of one step on one rank."""
    progress = min(1.0, step / max(world.last_step, 1))
    lengths, truncated = draw_lengths(rng, count, world.max_tokens, progress)
    reward, ref_reward = draw_rewards(rng, lengths, truncated, world.max_tokens, progress)
    prompts = rng.integers(len(world.pool), size=count)
    if group_size > 1:
        prompts, reward = group_prompts(world, rng, count, group_size, progress, truncated)
        count = len(prompts)
    samples = []
    for i, k in enumerate(prompts):
        prompt, truth = world.pool[k]
        answer = truth if reward[i] >= 0.5 else T.wrong_answer(rng, truth)
        tokens, text = world.corpus.response(rng, int(lengths[i]), None if truncated[i] else answer)
        ref_answer = truth if rng.random() < 0.35 else T.wrong_answer(rng, truth)
        ref_len = int(rng.integers(world.max_tokens // 16, world.max_tokens // 4 + 1))
        ref_text = world.corpus.response(rng, ref_len, ref_answer)[1]
        samples.append({"step": step, "prompt": prompt, "response": text, "ref_response": ref_text,
                        "ground_truth": truth, "response_tokens": tokens, **dict.fromkeys(ARRAYS),
                        "reward": float(reward[i]), "ref_reward": float(ref_reward[i])})
        if group_size > 1:
            samples[-1]["uid"] = f"{step}-{rank}-{i // group_size}"
    arrays = token_arrays(rng, np.array([len(s["response_tokens"]) for s in samples]),
                          reward, progress)
    for i, sample in enumerate(samples):
        sample.update({key: arrays[key][i] for key in ARRAYS})
    return samples


def with_policy_versions(batch: list[dict], rng: np.random.Generator, step: int, max_lag: int
                         ) -> None:
    """An async run's samples: each drawn by weights up to max_lag updates old (most of
    them fresh), one in five over two versions (its generation crossed a weight update)."""
    lags = np.minimum(rng.geometric(0.5, size=len(batch)) - 1, min(max_lag, step))
    for sample, lag in zip(batch, lags.tolist()):
        sample["policy_version"] = step - lag
        if lag and rng.random() < 0.2:
            sample["policy_version_newest"] = step - lag + 1


def write_dump(out_dir: str | Path, steps: int = 10, ranks: int = 2, samples_per_rank: int = 8,
               max_tokens: int = 256, seed: int = 0, start_step: int = 0,
               append: bool = False, group_size: int = 1, prompts: int = 0,
               max_lag: int = 0) -> list[Path]:
    """Write (or append) steps start_step.. of rollout_data_rank_{r}.jsonl; their paths.

    Training progress runs from step 0 to the last step written; appended steps continue
    where the existing run (steps 0..start_step-1) ended.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    last_step = start_step - 1 if append and start_step > 0 else start_step + steps - 1
    world = make_world(seed, ranks * samples_per_rank, max_tokens, last_step, group_size,
                       prompts)
    paths = [out / f"rollout_data_rank_{rank}.jsonl" for rank in range(ranks)]
    with ExitStack() as stack:
        handles = [stack.enter_context(open(p, "ab" if append else "wb")) for p in paths]
        for step in range(start_step, start_step + steps):
            for rank, handle in enumerate(handles):
                rng = np.random.default_rng([seed, 2, step, rank])
                batch = make_batch(world, rng, step, samples_per_rank, group_size, rank)
                if max_lag:
                    with_policy_versions(batch, rng, step, max_lag)
                handle.write(b"".join(encode(sample) for sample in batch))
    return paths


def listed(sample: dict) -> dict:
    """A sample whose arrays are plain lists, ready to be spoiled."""
    return {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in sample.items()}


def retext(sample: dict, prompt: str, text: str, truth: str) -> dict:
    """The sample with another prompt and response; token arrays redrawn to fit."""
    tokens = T.tokenize(text)
    arrays = token_arrays(np.random.default_rng(len(text)), np.array([len(tokens)]),
                          np.array([sample["reward"]]), 0.5)
    return {**sample, "prompt": prompt, "response": text, "ground_truth": truth,
            "response_tokens": tokens, **{key: arrays[key][0] for key in ARRAYS}}


def odd_lines(world: World) -> dict[int, list[tuple[int, str, bytes]]]:
    """Per rank: (after which step, what, raw line) of the demo's deliberately odd lines."""
    def real(step: int, k: int) -> dict:
        return listed(make_batch(world, np.random.default_rng([DEMO["seed"], 3, k]), step, 1)[0])
    cut, nan, null, pad = encode(real(2, 0)), real(5, 1), real(6, 2), real(7, 3)
    nan["logprobs"][3], nan["values"][5] = math.nan, math.inf
    null["logprobs"][1] = null["logprobs"][4] = None
    pad["response_tokens"] += ["<PAD>"] * 3
    html = retext(real(8, 4), T.HTML_PROMPT, T.HTML_RESPONSE, "<b>bold</b>")
    zh = retext(real(9, 5), T.ZH_PROMPT, T.ZH_RESPONSE, "84")
    array = orjson.dumps([{"step": 4, "prompt": "What is 2 + 2?", "response": " 4"}]) + b"\n"
    return {0: [(2, "malformed: JSON object cut in the middle",
                 cut[:cut.index(b'"logprobs"') + 120] + b"\n"),
                (3, 'valid: step written as the string "3"', encode({**real(3, 6), "step": "3"})),
                (5, "valid: NaN in logprobs and Infinity in values (Python json.dumps)",
                 json.dumps(nan).encode() + b"\n"),
                (6, "valid: null values in logprobs", encode(null)),
                (8, "valid: HTML/script payload in the response", encode(html))],
            1: [(2, 'unusable: "step": "abc"', encode({**real(2, 7), "step": "abc"})),
                (4, "unusable: a JSON array instead of an object", array),
                (4, "valid: step written as 4.0", encode({**real(4, 8), "step": 4.0})),
                (7, "valid: response_tokens has 3 trailing <PAD> more than logprobs",
                 encode(pad)),
                (9, "valid: Chinese prompt and response", encode(zh))]}


def insert_after_steps(path: Path,
                       extras: list[tuple[int, str, bytes]]) -> list[tuple[str, int, str]]:
    """Insert each extra line after the last line of its step; (file, line, what) of each."""
    lines = path.read_bytes().splitlines(keepends=True)
    steps = [orjson.loads(line)["step"] for line in lines]
    out, found = [], []
    for i, line in enumerate(lines):
        out.append(line)
        if i + 1 < len(lines) and steps[i + 1] == steps[i]:
            continue
        for step, what, raw in extras:
            if step == steps[i]:
                out.append(raw)
                found.append((path.name, len(out), what))
    path.write_bytes(b"".join(out))
    return found


def write_demo(out_dir: str | Path) -> list[tuple[str, int, str]]:
    """The committed demo dump: a small run plus odd lines; (file, line, what) of those."""
    paths = write_dump(out_dir, **DEMO)
    batch = DEMO["ranks"] * DEMO["samples_per_rank"]
    world = make_world(DEMO["seed"], batch, DEMO["max_tokens"], DEMO["steps"] - 1)
    extras = odd_lines(world)
    return [hit for rank, path in enumerate(paths)
            for hit in insert_after_steps(path, extras[rank])]


DEFAULTS = {"steps": 10, "ranks": 2, "samples_per_rank": 8, "max_tokens": 256, "seed": 0,
            "start_step": 0, "group_size": 1, "prompts": 0, "max_lag": 0}
# the shape of issue 21's long-run benchmark (benchmarks/bench_run_sizes.py)
LONG_RUN = {**DEFAULTS, "steps": 1000, "ranks": 8, "samples_per_rank": 128, "max_tokens": 16,
            "seed": 3, "group_size": 8, "prompts": 20_000}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    for name in DEFAULTS:
        parser.add_argument("--" + name.replace("_", "-"), type=int, default=None)
    parser.add_argument("--append", action="store_true", help="append to existing rank files")
    parser.add_argument("--demo", action="store_true", help="write the committed demo dump")
    parser.add_argument("--long-run", action="store_true",
                        help="the long-run shape (1,024,000 samples); other flags override it")
    args = parser.parse_args(argv)
    for name, value in (LONG_RUN if args.long_run else DEFAULTS).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    names = [args.out_dir / f"rollout_data_rank_{r}.jsonl" for r in range(args.ranks)]
    before = sum(p.stat().st_size for p in names if p.exists()) if args.append else 0
    if args.demo:
        for file, line, what in write_demo(args.out_dir):
            print(f"{file}:{line}: {what}")
        paths = sorted(args.out_dir.glob("rollout_data_rank_*.jsonl"))
    else:
        paths = write_dump(args.out_dir, args.steps, args.ranks, args.samples_per_rank,
                           args.max_tokens, args.seed, args.start_step, args.append,
                           args.group_size, args.prompts, args.max_lag)
    print(f"{sum(p.stat().st_size for p in paths) - before} bytes written")


if __name__ == "__main__":
    main()
