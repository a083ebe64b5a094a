"""loaders.parse.kl: the sign and the direction of every KL estimator, and the batched sums."""
import math

import numpy as np
import pytest

from loaders import schema as S
from loaders.parse import kl

R_POINTS = [-2.0, -0.5, 0.0, 0.5, 2.0]

# an asymmetric pair of categoricals: p is the policy (samples), q the reference
P = np.array([0.7, 0.2, 0.1])
Q = np.array([0.2, 0.3, 0.5])
KL_PQ = float(np.sum(P * np.log(P / Q)))  # KL(p || q), by definition
KL_QP = float(np.sum(Q * np.log(Q / P)))  # KL(q || p)


@pytest.fixture(scope="module")
def sampled_log_ratio():
    rng = np.random.default_rng(12345)
    x = rng.choice(len(P), size=1_000_000, p=P)
    return np.log(P[x]) - np.log(Q[x])


# ---- closed forms, point by point -------------------------------------------------------

@pytest.mark.parametrize("r", R_POINTS)
def test_k1_is_the_log_ratio(r):
    assert kl.estimate(np.array([r]))[S.K1][0] == pytest.approx(r, abs=1e-15)


@pytest.mark.parametrize("r", R_POINTS)
def test_k2_is_half_the_squared_log_ratio(r):
    assert kl.estimate(np.array([r]))[S.K2][0] == pytest.approx(r * r / 2, rel=1e-12)


@pytest.mark.parametrize("r", R_POINTS)
def test_k3_is_exp_minus_r_minus_one_plus_r(r):
    expected = math.exp(-r) - 1 + r
    assert kl.estimate(np.array([r]))[S.K3][0] == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("r", R_POINTS)
def test_k3_reverse_is_exp_r_minus_one_minus_r(r):
    expected = math.exp(r) - 1 - r
    got = kl.estimate(np.array([r]))[S.K3_REVERSE][0]
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_k3_and_k3_reverse_are_mirror_images():
    r = np.array(R_POINTS)
    est = kl.estimate(r)
    np.testing.assert_allclose(est[S.K3], kl.estimate(-r)[S.K3_REVERSE], rtol=1e-12)
    # and they differ for r != 0: the direction matters
    assert est[S.K3][0] != pytest.approx(est[S.K3_REVERSE][0])


def test_every_estimator_is_zero_at_zero():
    est = kl.estimate(np.zeros(1))
    for name in S.KL_ESTIMATORS:
        assert est[name][0] == 0.0, name


def test_estimate_returns_every_schema_estimator():
    assert set(kl.estimate(np.zeros(3))) == set(S.KL_ESTIMATORS)


# ---- signs --------------------------------------------------------------------------------

def test_k2_k3_k3_reverse_are_nonnegative_everywhere():
    r = np.linspace(-20, 20, 4001)
    est = kl.estimate(r)
    for name in (S.K2, S.K3, S.K3_REVERSE):
        assert (est[name] >= 0).all(), name


def test_k1_is_negative_for_negative_log_ratio():
    r = np.array([-3.0, -0.5, -1e-6])
    assert (kl.estimate(r)[S.K1] < 0).all()


def test_k3_is_not_tiny_negative_near_zero():
    # expm1 keeps precision where exp(-r) - 1 + r would cancel to a rounding error
    r = np.array([1e-9, -1e-9, 1e-12])
    est = kl.estimate(r)
    assert (est[S.K3] >= 0).all() and (est[S.K3_REVERSE] >= 0).all()


# ---- unbiasedness under samples of p --------------------------------------------------------

def test_closed_form_kl_values_are_distinct():
    # the test below would be meaningless if the three targets coincided
    assert abs(KL_PQ - KL_QP) > 0.03


def test_k1_mean_estimates_kl_p_q(sampled_log_ratio):
    mean = kl.estimate(sampled_log_ratio)[S.K1].mean()
    assert mean == pytest.approx(KL_PQ, rel=0.01)


def test_k3_mean_estimates_kl_p_q(sampled_log_ratio):
    mean = kl.estimate(sampled_log_ratio)[S.K3].mean()
    assert mean == pytest.approx(KL_PQ, rel=0.01)


def test_k3_reverse_mean_is_neither_kl_direction(sampled_log_ratio):
    mean = kl.estimate(sampled_log_ratio)[S.K3_REVERSE].mean()
    assert mean != pytest.approx(KL_PQ, rel=0.05)
    assert mean != pytest.approx(KL_QP, rel=0.05)


def test_k3_reverse_mean_matches_its_closed_form(sampled_log_ratio):
    # E_p[exp(r) - 1 - r] = E_p[p/q] - 1 - KL(p||q)
    expected = float(np.sum(P * P / Q)) - 1 - KL_PQ
    mean = kl.estimate(sampled_log_ratio)[S.K3_REVERSE].mean()
    assert mean == pytest.approx(expected, rel=0.01)


def test_k2_mean_is_biased_here(sampled_log_ratio):
    expected = float(np.sum(P * np.log(P / Q) ** 2)) / 2
    mean = kl.estimate(sampled_log_ratio)[S.K2].mean()
    assert mean == pytest.approx(expected, rel=0.01)
    assert mean != pytest.approx(KL_PQ, rel=0.05)


# ---- segment_sums -------------------------------------------------------------------------

def _expected_segment(r: np.ndarray) -> dict[str, float]:
    f = r[np.isfinite(r)]
    return {S.K1: f.sum(), S.K2: (f ** 2 / 2).sum(), S.K3: (np.exp(-f) - 1 + f).sum(),
            S.K3_REVERSE: (np.exp(f) - 1 - f).sum(), "finite": f.size}


def test_segment_sums_match_per_segment_numpy():
    rng = np.random.default_rng(7)
    segments = [rng.normal(0, 1, size=n) for n in (3, 1, 7, 4)]
    log_ratio = np.concatenate(segments)
    starts = np.array([0, 3, 4, 11])
    sums = kl.segment_sums(log_ratio, starts)
    for i, segment in enumerate(segments):
        expected = _expected_segment(segment)
        for name in S.KL_ESTIMATORS:
            assert sums[name][i] == pytest.approx(expected[name], rel=1e-12), (i, name)
        assert sums["finite"][i] == len(segment)
    assert set(sums) == set(S.KL_ESTIMATORS) | {"finite"}


def test_segment_sums_skip_non_finite_tokens():
    segments = [np.array([0.5, np.nan, -0.25]),
                np.array([np.inf, 1.0]),
                np.array([-np.inf, np.nan]),
                np.array([2.0, -2.0, 0.1])]
    sums = kl.segment_sums(np.concatenate(segments), np.array([0, 3, 5, 7]))
    for i, segment in enumerate(segments):
        expected = _expected_segment(segment)
        for name in S.KL_ESTIMATORS:
            assert np.isfinite(sums[name][i]), (i, name)
            assert sums[name][i] == pytest.approx(expected[name], rel=1e-12), (i, name)
    np.testing.assert_array_equal(sums["finite"], [2, 1, 0, 3])


def test_segment_sums_single_segment_is_plain_sum():
    r = np.array([0.3, -0.7, 1.1])
    sums = kl.segment_sums(r, np.array([0]))
    assert sums[S.K1][0] == pytest.approx(0.3 - 0.7 + 1.1)
    assert sums["finite"][0] == 3
