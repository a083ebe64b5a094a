"""token_bins' two ways of binning a metric agree, token for token (the last sample too)."""
import numpy as np

from loaders.index import token_bins as D


def _layout(lengths, per_group=7):
    rows = np.arange(len(lengths))
    return D.Layout((rows, np.asarray(lengths, dtype=np.int64)), rows // per_group)


def test_bins_by_token_and_by_bin_agree_and_count_every_finite_token():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 1500, 50)
    lengths[-1] = 5  # the last sample shorter than the longest: its last token still counts
    layout = _layout(lengths)
    values = rng.normal(size=int(lengths.sum()))
    values[::13] = np.nan
    groups = 50 // 7 + 1
    width = D.REL_BINS + layout.edges[1].shape[1] - 1
    assert width == layout.width
    _, by_bin_count, by_bin_mean = D.binned("m", values, layout, groups)
    _, count, mean = D._binned_by_token("m", values, np.isfinite(values), layout,
                                        (groups, width))
    assert np.array_equal(count, by_bin_count)
    assert np.allclose(mean, by_bin_mean, equal_nan=True)
    finite = int(np.isfinite(values).sum())
    # every finite token is in one relative bin and one absolute bin
    assert count[:, :D.REL_BINS].sum() == finite == count[:, D.REL_BINS:].sum()
