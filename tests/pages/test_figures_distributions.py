"""pages.figures.distributions: one step's rewards as bounded curves and bins."""
import numpy as np
import pandas as pd

from loaders import schema as S
from pages.figures import distributions as D


def _rows(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    reward = rng.normal(size=n)
    ref = rng.normal(0.5, 1.0, size=n)
    return pd.DataFrame({S.REWARD: reward, S.REF_REWARD: ref, S.REWARD_GAP: reward - ref})


def test_quantile_curve_keeps_a_lone_extreme_and_is_bounded():
    values = np.sort(np.r_[np.zeros(8191), 1000.0])
    share, y = D.quantile_curve(values, points=256)
    assert len(y) == 256 and y[-1] == 1000.0 and y[0] == 0.0 and share[-1] == 1.0


def test_quantile_curve_of_few_values_is_every_value():
    share, y = D.quantile_curve(np.array([1.0, 2.0, 4.0]))
    np.testing.assert_array_equal(y, [1.0, 2.0, 4.0])
    np.testing.assert_allclose(share, [1 / 3, 2 / 3, 1.0])


def test_ecdf_at_8192_samples_draws_a_bounded_number_of_points():
    chart = D.reward_ecdf(_rows(8192))
    series = list(dict.fromkeys(chart.data["series"]))
    assert series == ["reward (8192)", "ref_reward (8192)"]
    assert chart.spec["encoding"]["color"]["scale"]["domain"] == series
    for _, curve in chart.data.groupby("series"):
        assert len(curve) <= D.POINTS and np.all(np.diff(curve["value"]) >= 0)
        assert curve["share"].iloc[-1] == 1.0
    assert chart.spec["mark"]["interpolate"] == "step-after"


def test_ecdf_skips_a_missing_reference():
    rows = _rows(10).assign(**{S.REF_REWARD: np.nan})
    assert set(D.reward_ecdf(rows).data["series"]) == {"reward (10)"}


def test_gap_curve_counts_ahead_tied_behind_and_splits_the_fill():
    rows = pd.DataFrame({S.REWARD_GAP: [0.5, -0.25, 0.0, 0.0, np.nan, 1.0]})
    chart = D.reward_gap_curve(rows)
    assert "ahead 2, tied 2, behind 1 of 5" in chart.spec["title"]["text"]
    np.testing.assert_array_equal(chart.data["value"], [-0.25, 0.0, 0.0, 0.5, 1.0])
    assert chart.data["ahead"].min() >= 0 and chart.data["behind"].max() <= 0
    fills = [layer["encoding"]["y"]["field"] for layer in chart.spec["layer"][:2]]
    assert fills == ["ahead", "behind"]


def test_gap_curve_is_none_without_reference():
    assert D.reward_gap_curve(pd.DataFrame({S.REWARD_GAP: [np.nan, np.nan]})) is None


def test_group_means_stack_by_kind():
    table = pd.DataFrame({S.stat(S.REWARD, "mean"): [1.0, 0.0, 0.5, 0.25, 1.0],
                          S.GROUP_KIND: ["solved", "unsolved", "mixed", "mixed", "solved"]})
    chart = D.group_means(table, bins=4)
    assert chart.data.groupby("series")["count"].sum().to_dict() == {
        "solved (2)": 2, "mixed (2)": 2, "unsolved (1)": 1}
    # stacked here: a bar's bottom is the count of the kinds below it in its bin
    assert (chart.data["top"] - chart.data["bottom"] == chart.data["count"]).all()
    assert chart.spec["mark"]["type"] == "rect"
    assert D.group_means(table.assign(**{S.stat(S.REWARD, "mean"): np.nan})) is None
