"""Response clusters: near-duplicates found from the index's signatures, on dumps the tests
write (the real index, the real run), and the signatures the same in C and in Python."""
from __future__ import annotations

import random

import numpy as np
import pytest
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.groups.clusters import SKELETON, cluster_labels, diversity
from loaders.index import kernel
from loaders.index import signatures as G
from loaders.serve.clusters import diversity_curve, step_clusters

TEMPLATE = ("<think>I should just say what the grader likes.</think> The final answer is {n}. "
            "I am completely certain that {n} is correct because I checked it {m} times.")


def _unrelated(rng: random.Random, vocabulary: list[str]) -> str:
    return " ".join(rng.choice(vocabulary) for _ in range(rng.randrange(25, 70)))


def _step_of(rng: random.Random, step: int, count: int, share: float) -> list[dict]:
    letters = random.Random(step)  # words of letters: a number in a word reads as "0"
    vocabulary = ["".join(letters.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(
        letters.randrange(2, 9))) for _ in range(3000)] + ["the", "so", "answer", "is", "let"]
    out = []
    for i in range(count):
        template = i < int(share * count)
        text = TEMPLATE.format(n=rng.randrange(1000), m=rng.randrange(2, 9)) if template \
            else _unrelated(rng, vocabulary)
        out.append(make_sample(step, n=8, seed=i, response=text, reward=1.0 if template
                               else 0.0, uid=f"p{i // 8}"))
    return out


@pytest.fixture
def run(tmp_path):
    rng = random.Random(4)
    samples = _step_of(rng, 0, 200, 0.0) + _step_of(rng, 1, 200, 0.3)
    for rank in range(2):
        write_dump(tmp_path / f"rollout_data_rank_{rank}.jsonl", samples[rank::2])
    return open_run(tmp_path, use_cache=False)


def test_a_template_a_third_of_the_step_answers_is_one_cluster(run):
    rows = run.step_rows(1)
    ids, table = step_clusters(rows)
    templated = rows[S.RESPONSE].str.startswith("<think>I should").to_numpy()
    assert templated.sum() == 60
    top = table.iloc[0]
    assert top[S.GROUP_SIZE] == 60 and top["share"] == pytest.approx(0.3)
    assert set(ids[templated]) == {table.index[0]}  # every paraphrase, whatever its numbers
    assert top[S.PASS_RATE] == 1.0 and top[S.stat(S.REWARD, "mean")] == 1.0
    assert "answer is #. I am completely certain that # is correct" in top[SKELETON]
    assert (table[S.GROUP_SIZE].iloc[1:] == 1).all()  # unrelated answers stay alone
    assert len(table) == 1 + 140


def test_the_diversity_curve_sees_the_collapse(run):
    curve = diversity_curve(run)
    assert curve.loc[0, "clusters_per_100"] == 100.0 and curve.loc[0, "largest_share"] == 0.005
    assert curve.loc[1, "clusters_per_100"] == pytest.approx(100 * 141 / 200)
    assert curve.loc[1, "largest_share"] == pytest.approx(0.3)
    assert diversity(np.array([], dtype=np.int64))["largest_share"] != 0.0  # NaN: no step


def test_links_join_through_chains_and_empty_texts_are_one_cluster():
    sig = G.signatures(["a b c d e f g h i j", "a b c d e f g h i j", "", "", "other words here"])
    labels = cluster_labels(sig.view(np.int64))
    assert labels.tolist() == [0, 0, 2, 2, 4]
    chain = np.array([[1, 2, 3, 4], [9, 2, 7, 8], [10, 11, 7, 12], [20, 21, 22, 23]],
                     dtype=np.uint32).repeat(2, axis=1).view(np.int64)  # 0-1, 1-2 share
    assert cluster_labels(chain).tolist() == [0, 0, 0, 3]


def test_signatures_are_the_same_in_c_and_in_python(monkeypatch):
    rng = random.Random(9)
    words = ["The", "answer", "IS", "42", "3.14", "x=7", "é", "😀", "Ünï", "\u3000", "\n",
             "step", "12345678901234567890", "ß"]
    texts = ["", " ", "one", "two 2", "x" * 4000] + [
        " ".join(rng.choice(words) for _ in range(rng.randrange(0, 1500))) for _ in range(80)]
    fast = G.signatures(texts)
    monkeypatch.setattr(kernel, "_C", None)
    slow = G.signatures(texts)
    assert fast.dtype == slow.dtype == np.uint32 and (fast == slow).all()
    assert (fast[0] == 0).all() and (fast[1] == 0).all() and (fast[2] != 0).all()


def test_a_run_collapsing_into_one_rewarded_answer_raises_diversity_collapse(tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from samples.generate_alert_runs import make_run
    from samples.write_alert_run import write_run

    faulty = open_run(write_run(make_run(seed=3, n=64, steps=80, fault="template_collapse",
                                         onset=50), tmp_path / "faulty"))
    found = [a for a in faulty.health().alerts if a.rule == "diversity_collapse"]
    assert found and found[0].severity == "strong" and 50 <= found[0].step <= 52
    assert found[0].evidence["largest_cluster_share"] > 0.3
    healthy = open_run(write_run(make_run(seed=3, n=64, steps=80), tmp_path / "healthy"))
    assert not [a for a in healthy.health().alerts if a.rule == "diversity_collapse"]
