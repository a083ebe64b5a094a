"""Token digests made at index time: position-bin means and hot tokens against a brute
force over the real token tables, and their survival through growth, rewrite, splits,
worker processes and a tampered index."""
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dump_files import keyed, line_of, make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.index import hot_tokens as H
from loaders.index import pool
from loaders.index import token_digest as D
from loaders.index.index_file import save_index
from loaders.index.ondisk import Stored, load_index
from loaders.index.previews import stored_frame
from loaders.serve import token_summary as T


def _samples(step: int, count: int, seed: int, **extra) -> list[dict]:
    rng = np.random.default_rng([seed, step])
    out = []
    for i in range(count):
        n = int(rng.integers(1, 1300))
        words = ["Wait", " so", " the", ".", "\n"]
        sample = make_sample(step, n=n, seed=seed * 100 + i,
                             response_tokens=[words[j] for j in rng.integers(0, 5, n)],
                             entropy=rng.gamma(1.0, 0.5, n).round(3).tolist(), **extra)
        if i == 1:
            sample["logprobs"][0] = None  # a non-finite token is left out of its bin's mean
        out.append(sample)
    return out


def _dump(root: Path, steps: int = 3, files: int = 2, count: int = 5) -> Path:
    for f in range(files):
        write_dump(root / f"rollout_data_rank_{f}.jsonl",
                   [s for step in range(steps) for s in _samples(step, count, seed=f)])
    return root


def _brute_grid(run, metric: str, relative: bool) -> dict[int, np.ndarray]:
    """Token-weighted means per step and bin, from every sample's real token table."""
    sums, counts = {}, {}
    rows = keyed(run)
    for key, step in zip(rows[S.KEY], rows[S.STEP]):
        tokens = run.sample(key).tokens
        values = tokens[metric].to_numpy(dtype=float)
        n = len(values)
        bins = (np.arange(n) * D.REL_BINS // n) if relative else np.arange(n) // D.ABS_TOKENS
        width = D.REL_BINS if relative else 3
        s, c = sums.setdefault(step, np.zeros(width)), counts.setdefault(step, np.zeros(width))
        for b, v in zip(bins, values):
            if math.isfinite(v):
                s[b] += v
                c[b] += 1
    with np.errstate(invalid="ignore"):
        return {step: sums[step] / counts[step] for step in sums}


@pytest.mark.parametrize("metric", ["logprob", S.K3, "entropy"])
@pytest.mark.parametrize("relative", [True, False])
def test_position_means_match_a_brute_force(tmp_path, metric, relative):
    run = open_run(_dump(tmp_path / "run"), use_cache=False)
    found = run.token_digests()
    assert T.summary_metrics(found) == ["logprob", S.K3, "entropy"]
    grid = T.position_grid(found, metric, T.RELATIVE if relative else T.ABSOLUTE)
    expected = _brute_grid(run, metric, relative)
    assert grid.steps == sorted(expected)
    for row, step in enumerate(grid.steps):
        want = expected[step][: grid.means.shape[1]]
        np.testing.assert_allclose(grid.means[row], want, rtol=2e-6, equal_nan=True)


def _brute_hot(run, step: int, metric: str) -> dict[str, tuple[int, float]]:
    """Per file, its top candidates(tokens) tokens of the step; then by token string."""
    found: dict[str, list] = {}
    rows = run.step_rows(step)
    for _, part in rows.groupby(S.FILE, observed=True):
        tables = [run.sample(k).tokens for k in part[S.KEY]]
        values = np.concatenate([t[metric].to_numpy(dtype=float) for t in tables])
        texts = [tok for t in tables for tok in t[S.TOKEN]]
        k = H.candidates(len(values))
        scored = np.where(np.isfinite(values) & (values > 0), values, -np.inf)
        for i in np.argsort(-scored, kind="stable")[:k]:
            if scored[i] > -np.inf:
                entry = found.setdefault(texts[i], [0, 0.0])
                entry[0] += 1
                entry[1] += float(values[i])
    return {token: (c, s) for token, (c, s) in found.items()}


def test_hot_tokens_match_a_brute_force(tmp_path):
    run = open_run(_dump(tmp_path / "run", count=6), use_cache=False)
    for step in run.steps:
        rows = run.step_rows(step)
        table = T.hot_tokens(T.digests(rows), S.K3, rows, k=100)
        expected = _brute_hot(run, step, S.K3)
        assert sorted(table["token"]) == sorted(expected)
        for token, count, total in zip(table["token"], table["count"], table[f"{S.K3} sum"]):
            assert count == expected[token][0]
            assert total == pytest.approx(expected[token][1], rel=1e-4)
        assert list(table[f"{S.K3} sum"]) == sorted(table[f"{S.K3} sum"], reverse=True)
        for key, pos, largest in zip(table["sample"], table["position"],
                                     table[f"{S.K3} largest"]):
            assert run.sample(key).tokens[S.K3].iloc[pos] == pytest.approx(largest, rel=1e-4)


def _views(run, steps=None) -> tuple:
    found = run.token_digests()
    grids = [T.position_grid(found, m, s) for m in T.summary_metrics(found)
             for s in (T.RELATIVE, T.ABSOLUTE)]
    hot = [T.hot_tokens(T.digests(run.step_rows(step)), S.K3, run.step_rows(step))
           for step in (run.steps if steps is None else steps)]
    return grids, hot


def _same_views(a, b) -> None:
    for ga, gb in zip(a[0], b[0], strict=True):
        assert ga.steps == gb.steps
        np.testing.assert_allclose(ga.means, gb.means, rtol=1e-6, equal_nan=True)
        np.testing.assert_array_equal(ga.tokens, gb.tokens)
    for ha, hb in zip(a[1], b[1], strict=True):
        pd.testing.assert_frame_equal(ha, hb)


def _blobs(run) -> set[bytes]:
    return set(keyed(run)[S.TOKEN_DIGEST].dropna())


def test_digests_survive_growth_and_reopen(tmp_path):
    root = _dump(tmp_path / "run")
    first = open_run(root)
    assert first.cache == "miss"
    with open(root / "rollout_data_rank_0.jsonl", "ab") as handle:  # the same step goes on
        handle.write(b"".join(line_of(s) for s in _samples(2, 3, seed=7) + _samples(3, 4, 8)))
    grown = open_run(root)
    assert grown.cache == "partial" and 3 in grown.steps
    full = open_run(root, use_cache=False)
    # position means are sums: exactly what a full parse makes; hot tokens are taken per
    # parsed part of a file's step, so the steps the growth did not touch are the same
    _same_views(_views(grown, [0, 1, 3]), _views(full, [0, 1, 3]))
    assert _blobs(first) <= _blobs(grown)  # what was indexed is kept as it was
    step2 = T.hot_tokens(T.digests(grown.step_rows(2)), S.K3, grown.step_rows(2), k=1000)
    old = T.hot_tokens(T.digests(first.step_rows(2)), S.K3, first.step_rows(2), k=1000)
    assert step2["count"].sum() > old["count"].sum()  # and the new lines' top tokens added
    again = open_run(root)
    assert again.cache == "hit" and _blobs(again) == _blobs(grown)


def test_digests_follow_a_rewritten_file(tmp_path):
    root = _dump(tmp_path / "run")
    before = _views(open_run(root))
    write_dump(root / "rollout_data_rank_1.jsonl", _samples(5, 4, seed=9))
    os.utime(root / "rollout_data_rank_1.jsonl", ns=(1, 1))
    after = open_run(root)
    assert 5 in after.steps
    _same_views(_views(after), _views(open_run(root, use_cache=False)))
    assert [len(g.steps) for g in before[0]] != [len(g.steps) for g in _views(after)[0]]


def test_digests_split_with_validation(tmp_path):
    root = tmp_path / "run"
    write_dump(root / "rollout_data_rank_0.jsonl",
               _samples(0, 3, seed=1) + _samples(0, 2, seed=2, validation=True))
    run = open_run(root, use_cache=False)
    train, valid = run.part(False), run.part(True)
    assert len(train.token_digests()) == len(valid.token_digests()) == 1
    tokens = [T.position_grid(p.token_digests(), "entropy").tokens.sum() for p in (train, valid)]
    lengths = [p.samples[S.RESPONSE_LEN].sum() for p in (train, valid)]
    assert tokens == lengths


def test_worker_processes_and_bundles_make_the_same_digests(tmp_path, monkeypatch):
    root = tmp_path / "run"
    for f in range(6):  # small files: scanned in bundles
        write_dump(root / f"rollout_data_rank_{f}.jsonl", _samples(0, 2, seed=f))
    inline = _views(open_run(root, use_cache=False))
    monkeypatch.setattr(pool, "INLINE_BYTES", 0)
    _same_views(_views(open_run(root, use_cache=False)), inline)


def test_a_tampered_digest_is_skipped_not_trusted(tmp_path):
    root = _dump(tmp_path / "run", steps=1, files=1)
    run = open_run(root)
    stored = load_index(root)
    frame = stored_frame(stored.frame, stored.previews)  # as the file holds it
    held = frame[S.TOKEN_DIGEST].notna()
    frame.loc[held, S.TOKEN_DIGEST] = [b'{"rel": -1}\0', b"\xff" * 9][: held.sum()]
    save_index(root, Stored(frame, stored.files, stored.problems))
    reopened = open_run(root)
    assert reopened.cache == "hit" and reopened.token_digests() == []
    assert T.summary_metrics(run.token_digests()) == ["logprob", S.K3, "entropy"]


def test_a_digest_is_small_whatever_the_length(tmp_path):
    root = tmp_path / "run"
    write_dump(root / "rollout_data_rank_0.jsonl",
               [make_sample(0, n=n, seed=n) for n in (20, 5_000, 30_000)])
    blob = keyed(open_run(root, use_cache=False))[S.TOKEN_DIGEST].dropna().iloc[0]
    assert len(blob) < 3_000  # 32 + 59 bins of two metrics and a few hot tokens
