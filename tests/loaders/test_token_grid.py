"""The Tokens page's grid table (loaders.serve.token_grid): every metric's grid read back from
it is the grid made from the digests, also when metrics differ in steps and widths, after the
table is kept beside the index and read by a reopened run."""
import numpy as np
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders.index.cachedir import CACHE_DIR_NAME
from loaders.index.derived import DERIVED_DIR
from loaders.serve import token_grid as G
from loaders.serve import token_summary as T


def _dump(root):
    samples = []
    for step in range(4):
        for i in range(3):
            n = 40 + 700 * i + 13 * step  # up to three absolute bins
            extra = {"entropy": np.linspace(0.1, 2.0, n).round(4).tolist()} if step % 2 else {}
            samples.append(make_sample(step, n=n, seed=i, **extra))
    write_dump(root / "rollout_data_rank_0.jsonl", samples)
    return root


def _same(a: T.PositionGrid, b: T.PositionGrid) -> None:
    assert a.steps == b.steps
    assert a.starts == b.starts and list(map(type, a.starts)) == list(map(type, b.starts))
    np.testing.assert_array_equal(a.means, b.means)
    np.testing.assert_array_equal(a.tokens, b.tokens)


def test_each_metric_reads_back_as_its_position_grid(tmp_path):
    found = open_run(_dump(tmp_path / "run"), use_cache=False).token_digests()
    for scale in (T.RELATIVE, T.ABSOLUTE):
        table = G.grid_table(found, scale)
        assert G.grid_metrics(table) == T.summary_metrics(found) == ["logprob", "k3", "entropy"]
        for metric in G.grid_metrics(table):
            _same(G.grid_of(table, metric, scale), T.position_grid(found, metric, scale))
    entropy = G.grid_of(G.grid_table(found, T.RELATIVE), "entropy")
    assert entropy.steps == [1, 3]  # the metric's own steps, not the table's
    absolute = G.grid_of(G.grid_table(found, T.ABSOLUTE), "logprob", T.ABSOLUTE)
    assert absolute.means.shape == (4, 3) and absolute.starts == [0, 512, 1024]


def test_a_metric_without_absolute_bins_keeps_its_steps(tmp_path):
    """Digests whose absolute part is empty: a grid of the steps and no bin, as made."""
    found = [T.Digest(step, "f", 2, 512, {"k3": (np.ones(2, np.uint32), np.ones(2, np.float32))},
                      {}) for step in (0, 8)]
    want = T.position_grid(found, "k3", T.ABSOLUTE)
    assert want.steps == [0, 8] and want.means.shape == (2, 0)
    _same(G.grid_of(G.grid_table(found, T.ABSOLUTE), "k3", T.ABSOLUTE), want)


def test_no_digests_is_an_empty_table(tmp_path):
    table = G.grid_table([], T.RELATIVE)
    assert G.grid_metrics(table) == []
    assert G.grid_of(table, "k3").steps == []


def test_a_kept_grid_is_read_back_by_a_reopened_run(tmp_path):
    root = _dump(tmp_path / "run")
    run = open_run(root)
    name = G.NAME.format(scale=T.RELATIVE)
    made = run.derived_table(name, lambda: G.grid_table(run.token_digests(), T.RELATIVE))
    kept = list((root / CACHE_DIR_NAME / DERIVED_DIR).glob(name + ".*.parquet"))
    assert len(kept) == 1, "the grid table was not kept beside the index"
    again = open_run(root)
    read = again.derived_table(name, lambda: (_ for _ in ()).throw(
        AssertionError("made again instead of read")))
    for metric in G.grid_metrics(made):
        _same(G.grid_of(read, metric), G.grid_of(made, metric))
