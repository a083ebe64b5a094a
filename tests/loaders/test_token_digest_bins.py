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


def test_digest_groups_are_the_same_packed_or_as_rows_of_three():
    from loaders import schema as S
    from loaders.index import token_digest

    rng = np.random.default_rng(3)
    n = 500
    cols = {S.FILE: [f"r{i}.jsonl" for i in rng.integers(0, 4, n)],
            S.STEP: rng.integers(-3, 40, n), S.VALIDATION: rng.random(n) < 0.2}
    rows = np.sort(rng.choice(n, 400, replace=False))
    packed = token_digest._groups(cols, rows)
    wide = dict(cols, **{S.STEP: cols[S.STEP] * (1 << 41)})  # past 40 bits: rows of three
    fallback = token_digest._groups(wide, rows)
    assert packed[0].tolist() == fallback[0].tolist() and packed[1] == fallback[1]
    assert len(set(packed[0][rows].tolist())) > 100


def test_bins_by_token_in_c_are_numpys_bits(monkeypatch):
    """The C pass adds each bin's tokens in the order numpy's bincount does: the same sums,
    bit for bit, NaN and infinities counted out, groups out of order, lengths across the
    absolute bins' edges."""
    from loaders.index import kernel

    if kernel._C is None:
        import pytest

        pytest.skip("kernel.c not built")
    rng = np.random.default_rng(5)
    lengths = np.concatenate([rng.integers(1, 40, 300), [511, 512, 513, 1500, 1]])
    rows = np.arange(len(lengths))
    groups = rng.integers(0, 9, len(lengths))
    layout = D.Layout((rows, lengths.astype(np.int64)), groups)
    values = rng.normal(size=int(lengths.sum())) * 10.0 ** rng.integers(-8, 8, int(lengths.sum()))
    values[::11], values[::17], values[::29] = np.nan, np.inf, -np.inf
    shape = (9, layout.width)
    fast = D._binned_by_token("m", values, np.isfinite(values), layout, shape)
    monkeypatch.setattr(kernel, "_C", None)
    slow = D._binned_by_token("m", values, np.isfinite(values), layout, shape)
    assert fast[1].tobytes() == slow[1].tobytes()
    assert np.array_equal(fast[2], slow[2], equal_nan=True)
    assert fast[2].tobytes() == slow[2].tobytes()


def test_top_tokens_in_c_are_the_sorted_ones_ties_and_all():
    from loaders.index import hot_tokens as H
    from loaders.index import kernel

    if kernel.MISSING:
        import pytest
        pytest.skip(kernel.MISSING)
    rng = np.random.default_rng(5)
    lengths = rng.integers(0, 3000, 40)
    lengths[:3] = [0, 1, 2]  # runs shorter than their candidates
    values = rng.choice([0.5, 0.25, 0.125, 2.0, -1.0, 0.0, np.nan, np.inf], int(lengths.sum()))
    values[::7] = rng.random(len(values[::7]))  # bf16-like ties among plain values
    layout = _layout(lengths, per_group=3)
    lows = layout.starts[::3]
    highs = np.append(layout.starts[3::3], layout.starts[-1] + lengths[-1])
    ks = np.minimum(H.candidates(highs - lows), highs - lows)
    ks[5] = 0
    by_c = kernel.top_tokens(values, lows, highs, ks)
    by_sort = H._top_by_sort(values, lows.tolist(), highs.tolist(), ks.tolist())
    assert by_c.tolist() == by_sort.tolist()
    assert len(by_c) > 50 and np.all(values[by_c] > 0) and np.isfinite(values[by_c]).all()
    ks[5] = min(H.candidates(highs[5] - lows[5]), highs[5] - lows[5])
    samples, at = H._top_tokens(values, layout)  # each run's candidates
    assert at.tolist() == H._top_by_sort(values, lows.tolist(), highs.tolist(),
                                         ks.tolist()).tolist()
    assert samples.tolist() == (
        np.searchsorted(layout.starts, at, side="right") - 1).tolist()
