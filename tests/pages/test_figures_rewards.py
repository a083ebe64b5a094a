"""Rewards page builders: step curves, bands, smoothing, zero-shift and one step's bars."""

import numpy as np
import pandas as pd
import pytest
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from pages.figures import distributions as D
from pages.figures import rewards as R

MEAN, STD = "mean", "std"


def _stats(means: dict, stds: dict | None = None, steps=None, samples: int = 8) -> pd.DataFrame:
    """A step_stats-shaped frame: one mean (and optional std) column per metric."""
    n = len(next(iter(means.values())))
    index = pd.Index(steps if steps is not None else range(n), name=S.STEP)
    columns = {S.stat(c, MEAN): v for c, v in means.items()}
    columns |= {S.stat(c, STD): v for c, v in (stds or {}).items()}
    columns[S.SAMPLES] = [samples] * n
    return pd.DataFrame(columns, index=index, dtype=np.float64)


def _named(chart, name: str) -> pd.DataFrame:
    """One curve's rows of a Vega-Lite step chart's data (step, value, raw, low, high)."""
    rows = chart.data[chart.data["series"] == name]
    assert len(rows), sorted(set(chart.data["series"]))
    return rows


def _names(chart) -> list[str]:
    return list(dict.fromkeys(chart.data["series"]))


def _band(chart) -> tuple[np.ndarray, np.ndarray]:
    """The band's (low, high) a step, and that the chart draws it (one area or bar layer)."""
    layers = [layer for layer in chart.spec["layer"]
              if layer["encoding"].get("y2", {}).get("field") == "high"]
    assert len(layers) == 1
    first = chart.data[chart.data["series"] == _names(chart)[0]]
    return first["low"].to_numpy(), first["high"].to_numpy()


def _title(chart) -> str:
    return chart.spec["title"]["text"]


REWARDS = [0.1, 0.4, 0.3, 0.8]
SPREAD = [0.2, 0.1, 0.0, 0.4]


def test_step_curve_mean_and_band():
    stats = _stats({S.REWARD: REWARDS}, {S.REWARD: SPREAD}, steps=[10, 20, 30, 40])
    chart = R.step_curve(stats, S.REWARD, band_k=1.5)
    assert _names(chart) == [f"{S.REWARD} mean"]
    mean = _named(chart, f"{S.REWARD} mean")
    np.testing.assert_array_equal(mean["step"], [10, 20, 30, 40])
    np.testing.assert_allclose(mean["value"], REWARDS)
    low, high = _band(chart)
    np.testing.assert_allclose(high, np.array(REWARDS) + 1.5 * np.array(SPREAD))
    np.testing.assert_allclose(low, np.array(REWARDS) - 1.5 * np.array(SPREAD))
    assert "± 1.5·std" in _title(chart) and "8 samples per step" in _title(chart)
    assert chart.spec["usermeta"]["embedOptions"]["renderer"] == "canvas"


def test_band_width_scales_with_k():
    stats = _stats({S.REWARD: REWARDS}, {S.REWARD: SPREAD})
    half = {}
    for k in (1.0, 2.5):
        half[k] = _band(R.step_curve(stats, S.REWARD, band_k=k))[1] - np.array(REWARDS)
    np.testing.assert_allclose(half[2.5], 2.5 * half[1.0])
    np.testing.assert_allclose(half[1.0], SPREAD)


def test_band_k_zero_hides_the_band():
    stats = _stats({S.REWARD: REWARDS}, {S.REWARD: SPREAD})
    chart = R.step_curve(stats, S.REWARD, band_k=0)
    assert _names(chart) == [f"{S.REWARD} mean"] and chart.data["low"].isna().all()
    assert not [layer for layer in chart.spec["layer"] if "y2" in layer["encoding"]]
    assert "std" not in _title(chart)


def test_smoothing_keeps_the_raw_curve_faint():
    stats = _stats({S.REWARD: REWARDS}, {S.REWARD: SPREAD})
    chart = R.step_curve(stats, S.REWARD, band_k=0, smoothing=0.5)
    mean = _named(chart, f"{S.REWARD} mean")
    np.testing.assert_allclose(mean["raw"], REWARDS)
    faint = [layer for layer in chart.spec["layer"]
             if layer["encoding"].get("y", {}).get("field") == "raw"]
    assert len(faint) == 1 and faint[0]["mark"]["opacity"] == pytest.approx(0.3)
    # hand-rolled debiased EMA
    last, expected = 0.0, []
    for i, v in enumerate(REWARDS, start=1):
        last = 0.5 * last + 0.5 * v
        expected.append(last / (1 - 0.5**i))
    np.testing.assert_allclose(mean["value"], expected)
    assert "EMA 0.5" in _title(chart)


def test_zero_shift_starts_every_curve_at_zero():
    stats = _stats({S.REWARD: REWARDS, S.REF_REWARD: [0.5, 0.6, 0.7, 0.9]},
                   {S.REWARD: SPREAD})
    chart = R.step_curve(stats, S.REWARD, band_k=1.0, zero_shift=True, ref_column=S.REF_REWARD)
    rl, ref = _named(chart, f"{S.REWARD} mean"), _named(chart, f"{S.REF_REWARD} mean")
    np.testing.assert_allclose(rl["value"], np.array(REWARDS) - 0.1)
    np.testing.assert_allclose(ref["value"], [0.0, 0.1, 0.2, 0.4], atol=1e-12)
    low, high = _band(chart)
    assert high[0] == pytest.approx(SPREAD[0]) and low[0] == pytest.approx(-SPREAD[0])
    (line,) = [layer for layer in chart.spec["layer"] if layer["mark"]["type"] == "line"]
    dashes = line["encoding"]["strokeDash"]["scale"]
    assert dashes["range"][dashes["domain"].index(f"{S.REF_REWARD} mean")] == [6, 4]


def test_zero_shift_with_smoothing_still_starts_at_zero():
    stats = _stats({S.REWARD: [np.nan, 2.0, 3.0, 1.0]}, {S.REWARD: [0.1] * 4})
    chart = R.step_curve(stats, S.REWARD, smoothing=0.9, zero_shift=True)
    smooth = _named(chart, f"{S.REWARD} mean")["value"].to_numpy()
    assert np.isnan(smooth[0]) and smooth[1] == pytest.approx(0.0)


def test_ref_column_without_data_is_left_out():
    stats = _stats({S.REWARD: REWARDS, S.REF_REWARD: [np.nan] * 4})
    chart = R.step_curve(stats, S.REWARD, ref_column=S.REF_REWARD)
    assert f"{S.REF_REWARD} mean" not in _names(chart)
    chart = R.step_curve(stats, S.REWARD, ref_column="not_a_column")
    assert len(_names(chart)) == 1  # no std column either: no band
    assert not [layer for layer in chart.spec["layer"] if "y2" in layer["encoding"]]


def test_one_step_and_nan_std():
    one = _stats({S.REWARD: [0.7]}, {S.REWARD: [0.2]}, steps=[5])
    chart = R.step_curve(one, S.REWARD, smoothing=0.8, zero_shift=True)
    np.testing.assert_allclose(_named(chart, f"{S.REWARD} mean")["value"], [0.0])
    low, high = _band(chart)
    np.testing.assert_allclose([high[0], low[0]], [0.2, -0.2])
    (bar,) = [layer for layer in chart.spec["layer"] if "y2" in layer["encoding"]]
    assert bar["mark"]["type"] == "rule"  # a single step has no area: the band is a bar
    nan_std = _stats({S.REWARD: REWARDS}, {S.REWARD: [0.1, np.nan, 0.1, 0.1]})
    chart = R.step_curve(nan_std, S.REWARD)
    low, high = _band(chart)
    assert np.isnan(high[1]) and np.isfinite(high[[0, 2, 3]]).all()  # a gap, not a zero
    assert len(_named(chart, f"{S.REWARD} mean")) == 4
    none = R.step_curve(_stats({S.REWARD: [1.0]}, {S.REWARD: [np.nan]}), S.REWARD)
    assert not [layer for layer in none.spec["layer"] if "y2" in layer["encoding"]]


def test_reward_curves_adds_valid_rewards_only_with_data():
    stats = _stats({S.REWARD: REWARDS, S.REF_REWARD: [0.5] * 4,
                    S.VALID_REWARD: [np.nan] * 4, S.REF_VALID_REWARD: [np.nan] * 4},
                   {S.REWARD: SPREAD})
    chart = R.reward_curves(stats, band_k=1, smoothing=0, zero_shift=False)
    assert _names(chart) == [f"{S.REWARD} mean", f"{S.REF_REWARD} mean"]
    _band(chart)
    stats[S.stat(S.VALID_REWARD, MEAN)] = [0.2, 0.3, 0.4, 0.5]
    stats[S.stat(S.REF_VALID_REWARD, MEAN)] = [0.1, np.nan, 0.1, 0.1]
    chart = R.reward_curves(stats, band_k=1, smoothing=0, zero_shift=True)
    np.testing.assert_allclose(_named(chart, f"{S.VALID_REWARD} mean")["value"],
                               [0.0, 0.1, 0.2, 0.3])
    ref_valid = _named(chart, f"{S.REF_VALID_REWARD} mean")["value"].to_numpy()
    assert np.isnan(ref_valid[1]) and ref_valid[3] == 0.0


def test_curves_mark_the_chosen_step_and_the_alerts_and_a_click_picks_a_step():
    stats = _stats({S.REWARD: REWARDS}, {S.REWARD: SPREAD}, steps=[10, 20, 30, 40])
    chart = R.reward_curves(stats, step=20, alerts=(30, 30, 10))
    rules = [layer for layer in chart.spec["layer"] if layer["mark"]["type"] == "rule"]
    assert rules[-1]["encoding"]["x"]["datum"] == 20
    assert rules[-1]["data"] == {"values": [{}]}  # one rule, not one per row of the curves
    (alerts,) = [layer for layer in chart.spec["layer"] if layer["mark"]["type"] == "rect"]
    assert alerts["data"]["values"] == [{"from": 9.5, "to": 10.5}, {"from": 29.5, "to": 30.5}]
    (pick,) = [layer for layer in chart.spec["layer"] if layer.get("params")]
    assert pick["params"][0]["name"] == "pick" and pick["params"][0]["select"]["nearest"]
    assert not [layer for layer in R.reward_curves(stats).spec["layer"]
                if layer["mark"]["type"] == "rect"]


def test_win_rate_curve():
    stats = _stats({S.REWARD: REWARDS})
    stats[S.WIN_RATE] = [0.25, 0.5, np.nan, 1.0]
    chart = R.win_rate_curve(stats)
    assert _names(chart) == ["win rate (ties excluded)"]  # no tie or loss shares here
    np.testing.assert_array_equal(_named(chart, "win rate (ties excluded)")["value"],
                                  [0.25, 0.5, np.nan, 1.0])
    line = [layer for layer in chart.spec["layer"] if layer["mark"]["type"] == "line"][-1]
    assert line["encoding"]["y"]["axis"]["format"] == ".0%"
    assert [layer["encoding"]["y"]["datum"] for layer in chart.spec["layer"]
            if layer["mark"]["type"] == "rule"] == [0.5]
    assert "wins / (wins + losses)" in _title(chart)
    faint = R.win_rate_curve(stats, smoothing=0.5)
    assert any(layer["encoding"].get("y", {}).get("field") == "raw"
               for layer in faint.spec["layer"])
    stats[S.TIE_SHARE] = [0.5, 0.2, np.nan, 0.0]
    stats[S.LOSS_SHARE] = [0.3, 0.4, np.nan, 0.0]
    assert _names(R.win_rate_curve(stats)) == ["win rate (ties excluded)", "tie share",
                                               "loss share"]


def test_reward_histogram_shares_bin_edges():
    rng = np.random.default_rng(0)
    reward = rng.normal(size=200)
    ref = rng.normal(1.0, 0.5, size=200)
    reward[:5] = np.nan
    rows = pd.DataFrame({S.REWARD: reward, S.REF_REWARD: ref})
    chart = R.reward_histogram(rows, bins=12)
    edges = np.linspace(min(np.nanmin(reward), ref.min()), max(np.nanmax(reward), ref.max()), 13)
    for column, values in ((S.REWARD, reward[5:]), (S.REF_REWARD, ref)):
        bars = chart.data[chart.data["column"] == column].sort_values("low")
        counts = np.histogram(values, bins=edges)[0]
        np.testing.assert_allclose(bars["low"], edges[:-1][counts > 0])
        np.testing.assert_allclose(bars["high"], edges[1:][counts > 0])
        np.testing.assert_array_equal(bars["count"], counts[counts > 0])
    assert chart.data.groupby("column")["count"].sum().to_dict() == {S.REWARD: 195,
                                                                     S.REF_REWARD: 200}
    assert set(chart.data["series"]) == {f"{S.REWARD} (195)", f"{S.REF_REWARD} (200)"}
    assert "12 bins on shared edges" in _title(chart)
    assert chart.spec["mark"]["opacity"] < 1 and chart.spec["encoding"]["y"]["stack"] is None
    assert chart.spec["params"][0]["select"]["fields"] == ["column", "low", "high"]


def test_a_shorter_bar_is_drawn_over_a_taller_one_of_its_bin_and_infinities_are_named():
    """Bars are drawn in data order: a reward bar under a taller ref_reward bar of the same
    bin must come after it, or a click there always opens the reference's samples."""
    rows = pd.DataFrame({S.REWARD: [0.0] * 4 + [1.0] * 9 + [np.inf],
                         S.REF_REWARD: [0.0] * 9 + [1.0] * 4 + [0.5]})
    chart = R.reward_histogram(rows, bins=2)
    for _, bin_bars in chart.data.groupby("low"):
        counts = bin_bars["count"].tolist()  # in draw order
        assert counts == sorted(counts, reverse=True) and len(counts) == 2
    assert "1 of ±inf not drawn" in _title(chart)
    assert "not drawn" not in _title(R.reward_histogram(rows.iloc[:13]))


def test_reward_histogram_edge_cases():
    assert R.reward_histogram(pd.DataFrame({S.REWARD: [np.nan], S.REF_REWARD: [np.nan]})) is None
    chart = R.reward_histogram(pd.DataFrame({S.REWARD: [1.0, 1.0], S.REF_REWARD: [np.nan] * 2}))
    assert set(chart.data["column"]) == {S.REWARD} and chart.data["count"].sum() == 2
    assert "shared edges" not in _title(chart)


def test_curves_from_a_real_dump(tmp_path):
    samples = [make_sample(step, seed=i) for step in range(4) for i in range(5)]
    run = open_run(write_dump(tmp_path / "run" / "rollout.jsonl", samples).parent)
    chart = R.reward_curves(run.step_stats, band_k=2.0, smoothing=0.0, zero_shift=False)
    by_step = pd.DataFrame(samples).groupby(S.STEP)[S.REWARD]
    np.testing.assert_allclose(_named(chart, f"{S.REWARD} mean")["value"], by_step.mean())
    np.testing.assert_allclose(_band(chart)[1], by_step.mean() + 2 * by_step.std(ddof=0))
    np.testing.assert_allclose(_named(chart, f"{S.REF_REWARD} mean")["value"], [0.25] * 4)
    assert "5 samples per step" in _title(chart)
    ecdf = D.reward_ecdf(run.step_rows(2)).data
    np.testing.assert_allclose(ecdf[ecdf["series"] == "reward (5)"]["value"],
                               sorted(s[S.REWARD] for s in samples[10:15]))


@pytest.mark.parametrize(("selection", "expected"), [
    ({"bin": [{"column": "reward", "low": 0.5, "high": 0.75}]}, ("reward", 0.5, 0.75)),
    ({"bin": [{"column": "ref_reward", "low": "1", "high": 2}]}, ("ref_reward", 1.0, 2.0)),
    ({"bin": []}, None), ({}, None), ({"bin": [{"low": 1, "high": 2}]}, None),
    ({"bin": [{"column": "uid", "low": 1, "high": 2}]}, None),
    ({"bin": [{"column": "reward", "low": float("nan"), "high": 2}]}, None),
    ({"bin": [{"column": "reward", "low": None, "high": 2}]}, None)])
def test_picked_bin(selection, expected):
    assert R.picked_bin(selection) == expected


@pytest.mark.parametrize(("selection", "expected"), [
    ({"pick": []}, None), ({}, None), ({"pick": [{"step": 3.6}]}, 4),
    ({"pick": [{"step": 7}, {"step": 2}]}, 7), ({"pick": [{"y": 1.0}]}, None),
    ({"pick": [{"step": float("nan")}]}, None), ({"pick": [{"step": "x"}]}, None)])
def test_selected_step(selection, expected):
    assert R.selected_step(selection) == expected
