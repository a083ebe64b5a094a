"""Runs of one ablation written with known overlaps, for the run comparison tests.

    base:      steps 0, 1, 2; prompts Q1..Q4, two answers each per step
    ablation:  steps 0, 2, 4; prompts Q2..Q5 (Q1 only in base, Q5 only here), written with a
               system prompt and padding around the same question, so only an id or the
               normalised text can match them; rewards known (see REWARDS)
    third:     steps 0..2; prompts Q1..Q3, no example_id (so "auto" matches by text) unless
               written with third_ids
"""
from __future__ import annotations

from pathlib import Path

from dump_files import make_sample, write_dump

QUESTIONS = {f"Q{i}": f"What is {i} + {i}?" for i in range(1, 6)}
# (run, question) -> the two answers' rewards at every step
REWARDS = {("base", "Q1"): (1.0, 0.0), ("base", "Q2"): (1.0, 0.0), ("base", "Q3"): (0.0, 0.0),
           ("base", "Q4"): (1.0, 1.0), ("ablation", "Q2"): (1.0, 1.0),
           ("ablation", "Q3"): (1.0, 0.0), ("ablation", "Q4"): (0.0, 0.0),
           ("ablation", "Q5"): (1.0, 0.0), ("third", "Q1"): (0.5, 0.5),
           ("third", "Q2"): (0.25, 0.75), ("third", "Q3"): (0.0, 1.0)}
STEPS = {"base": (0, 1, 2), "ablation": (0, 2, 4), "third": (0, 1, 2)}
SYSTEM = "You are a careful assistant.<endofsystem>"


def prompt_text(run: str, question: str, with_id_only: bool = False) -> str:
    text = QUESTIONS[question]
    if run == "ablation":
        return ("<PAD><PAD>  " + text + " \n") if not with_id_only else SYSTEM + text
    return text


def samples(run: str, with_id_only: bool = False, third_ids: bool = False) -> list[dict]:
    out = []
    for step in STEPS[run]:
        for (name, question), rewards in REWARDS.items():
            if name != run:
                continue
            for i, reward in enumerate(rewards):
                extra = ({} if run == "third" and not third_ids
                         else {"example_id": int(question[1:])})
                out.append(make_sample(step, n=4 + i + len(question), seed=i, reward=reward,
                                       prompt=prompt_text(run, question, with_id_only),
                                       response=f"{run} answer {i} to {question}: "
                                                f"{'four' if reward else 'five'}", **extra))
    return out


def write_runs(root: Path, with_id_only: bool = False, third_ids: bool = False) -> Path:
    """base/, ablation/ and third/ under root (each one rank file); returns root."""
    for run in STEPS:
        write_dump(root / run / "rollout_data_rank_0.jsonl",
                   samples(run, with_id_only, third_ids))
    return root
