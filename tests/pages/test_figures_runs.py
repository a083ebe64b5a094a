"""Pure builders of Compare runs: colours, labels, overlays, differences, the prompt table."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from loaders import schema as S
from loaders.health.alerts import Alert
from pages.figures import runs as build
from pages.figures import runs_alerts as alerts
from pages.figures import runs_curves as curves
from pages.figures import runs_prompts as prompts
from pages.figures.curve_points import MAX_POINTS
from pages.figures.step_panels import HIGH, RAW, SERIES, STEP, VALUE
from pages.frame.view import DisplayOptions

MEAN = S.stat(S.REWARD, "mean")


def _stats(values, steps=None) -> pd.DataFrame:
    steps = list(range(len(values))) if steps is None else steps
    return pd.DataFrame({MEAN: values, S.stat(S.REWARD, "std"): [0.1] * len(values)},
                        index=pd.Index(steps, name=S.STEP))


def test_a_runs_colour_does_not_depend_on_the_others():
    three = build.colours(["runs/a", "runs/b", "runs/c"])
    assert len(set(three)) == 3
    assert build.colours(["runs/c", "runs/a"]) == [three[2], three[0]]
    assert build.colours(["runs/b"]) == [three[1]]


def test_runs_compared_take_hues_of_different_families_while_one_is_free():
    """Vermilion beside brown, or blue beside sky blue, read as one run: two to five runs
    never share a family of hues, whatever their names."""
    family = {hue: name for name, hues in (("blue", "#0072B2 #56B4E9 #17becf"),
                                           ("warm", "#D55E00 #E69F00 #8c564b"),
                                           ("green", "#009E73 #bcbd22"), ("pink", "#CC79A7"),
                                           ("grey", "#7f7f7f")) for hue in hues.split()}
    names = [f"runs/exp-{i}" for i in range(40)]
    for a, b in itertools.combinations(names, 2):
        first, second = build.colours([a, b])
        assert family[first] != family[second], (a, b, first, second)
    for five in itertools.combinations(names[:9], 5):
        assert len({family[c] for c in build.colours(list(five))}) == 5
    assert len(set(build.colours(names[:10]))) == 10  # then every hue once


def test_labels_default_to_dir_names_typed_ones_win_and_stay_unique():
    assert build.labels(["x/base", "y/base", "/abs/ablation"]) == ["base", "base #2", "ablation"]
    assert build.labels(["a", "b", "c"], "A, , C") == ["A", "b", "C"]
    assert build.labels(["a" * 40])[0].endswith("…") and len(build.labels(["a" * 40])[0]) == 24


def _layer_marks(chart) -> list[str]:
    return [layer["mark"]["type"] for layer in chart.spec["layer"]]


def test_overlay_one_curve_and_band_per_run_with_names_literal():
    series = [build.Series("<b>A</b>", "#000", _stats([0.1, 0.2])),
              build.Series("B", "#111", _stats([0.3, 0.5]))]
    chart = curves.overlay_chart(series, MEAN, band_k=1.0, title="reward")
    data = chart.data
    # a label is a data value, drawn on the canvas as text: kept as typed, never markup
    assert data[SERIES].unique().tolist() == ["<b>A</b>", "B"]
    assert data[data[SERIES] == "B"][VALUE].tolist() == [0.3, 0.5]
    assert data[data[SERIES] == "B"][HIGH].tolist() == pytest.approx([0.4, 0.6])
    assert _layer_marks(chart) == ["area", "line"]  # the bands under the curves
    colour = chart.spec["layer"][1]["encoding"]["color"]["scale"]
    assert colour == {"domain": ["<b>A</b>", "B"], "range": ["#000", "#111"]}
    assert chart.spec["usermeta"]["embedOptions"]["renderer"] == "canvas"
    # hover values are the curves' own: a band shows none (its edges, unformatted)
    band, curve = chart.spec["layer"]
    assert band["mark"]["tooltip"] is None
    assert [t["field"] for t in curve["encoding"]["tooltip"]] == [STEP, SERIES, VALUE]
    smoothed = curves.overlay_chart(series, MEAN, smoothing=0.5)
    assert _layer_marks(smoothed) == ["line", "line"]  # a faint raw curve under each EMA
    assert smoothed.data[RAW].tolist() == [0.1, 0.2, 0.3, 0.5]
    assert smoothed.data[VALUE].tolist() != smoothed.data[RAW].tolist()
    assert "EMA 0.5" in smoothed.spec["title"]["text"]


def test_overlay_of_long_runs_draws_a_bounded_number_of_points():
    steps = np.arange(5_000)
    spike = np.where(steps == 4_321, 9.0, np.sin(steps / 50.0))
    chart = curves.overlay_chart([build.Series("A", "#000", _stats(spike.tolist())),
                                  build.Series("B", "#111", _stats(np.cos(steps).tolist()))],
                                 MEAN, band_k=1.0)
    per_run = chart.data.groupby(SERIES).size()
    assert per_run.max() <= 2 * MAX_POINTS and set(per_run.index) == {"A", "B"}
    assert 9.0 in chart.data[VALUE].tolist()  # a one-step spike stays drawn
    assert chart.spec["layer"][-1]["mark"]["point"] is False  # lines only past the marker bound


def test_overlay_over_wall_time_in_hours_when_logged():
    times = pd.Series([1000.0, 4600.0], index=pd.Index([0, 1], name=S.STEP))
    chart = curves.overlay_chart([build.Series("A", "#000", _stats([0.1, 0.2]))], MEAN,
                                 x_axis=build.TIME_AXIS, times=[times])
    assert chart.data[STEP].tolist() == [0.0, 1.0]
    assert chart.spec["layer"][-1]["encoding"]["x"]["title"] == curves.HOURS
    untimed = curves.overlay_chart([build.Series("A", "#000", _stats([0.1, 0.2]))], MEAN,
                                   x_axis=build.TIME_AXIS, times=[None])
    assert untimed.data[STEP].tolist() == [0.0, 1.0]
    assert untimed.spec["layer"][-1]["encoding"]["x"]["title"] == "step"


def test_difference_chart_draws_b_minus_a():
    frame = pd.DataFrame({"a": [0.2, 0.3], "b": [0.5, 0.25], S.DELTA: [0.3, -0.05]},
                         index=pd.Index([1, 2], name=S.STEP))
    chart = curves.difference_chart([build.Series("B", "#111", frame)], "reward mean", "A")
    assert chart.data[VALUE].tolist() == [0.3, -0.05]
    assert chart.data[SERIES].unique().tolist() == ["B − A"]
    assert chart.data[["a", "b"]].to_numpy().tolist() == [[0.2, 0.5], [0.3, 0.25]]
    assert "2 points" in chart.spec["title"]["text"]
    zero, curve = chart.spec["layer"]
    assert zero["encoding"]["y"]["datum"] == 0 and len(zero["data"]["values"]) == 1
    assert curve["encoding"]["color"]["scale"] == {"domain": ["B − A"], "range": ["#111"]}
    other = pd.DataFrame({"a": [0.3], "b": [0.0], S.DELTA: [-0.3]},
                         index=pd.Index([2], name=S.STEP))
    table = build.difference_table([build.Series("B", "#111", frame),
                                    build.Series("C", "#222", other)], "A")
    assert table.columns.tolist() == ["A", "B", "B − A", "C", "C − A"]
    assert table.index.tolist() == [1, 2] and table["C − A"].isna().tolist() == [True, False]


def test_alerts_of_every_run_in_one_table_and_timeline():
    table = alerts.alerts_frame([("A", [Alert("divergence", "strong", 3, {"kl": 1.0})]),
                                ("B", [Alert("memory_risk", "weak", 1)])])
    assert table["run"].tolist() == ["B", "A"] and table[S.STEP].tolist() == [1, 3]
    chart = alerts.alerts_timeline(table, {"A": "#000", "B": "#111"})
    assert chart.data[["run", S.STEP, "severity"]].values.tolist() == [
        ["B", 1, "weak"], ["A", 3, "strong"]]
    assert chart.spec["layer"][0]["encoding"]["color"]["scale"] == {
        "domain": ["B", "A"], "range": ["#111", "#000"]}
    assert [layer["mark"]["filled"] for layer in chart.spec["layer"]] == [False, True]
    styled = alerts.coloured_by_run(table, {"A": "#000", "B": "#111"}).to_html()
    assert "color: #111" in styled and "color: #000" in styled


def _matched() -> pd.DataFrame:
    table = pd.DataFrame({
        S.PROMPT: ["sys<endofsystem>Q1", "Q2", "Q3", "Q4"],
        S.run_column(S.SAMPLES, 0): [2, 2, 0, 2], S.run_column(S.SAMPLES, 1): [2, 2, 2, 0],
        S.run_column(MEAN, 0): [0.5, 1.0, np.nan, 0.2],
        S.run_column(MEAN, 1): [1.0, 0.0, 0.4, np.nan],
        S.run_column(S.PASS_RATE, 0): [0.5, 1.0, np.nan, 0.0],
        S.run_column(S.PASS_RATE, 1): [1.0, 0.0, 0.5, np.nan]},
        index=pd.Index(["1", "2", "3", "4"], name=S.MATCH_KEY))
    table[prompts.DELTA_MEAN] = table[S.run_column(MEAN, 1)] - table[S.run_column(MEAN, 0)]
    table[prompts.DELTA_PASS] = (table[S.run_column(S.PASS_RATE, 1)]
                                 - table[S.run_column(S.PASS_RATE, 0)])
    table[S.RUNS_WITH] = [2, 2, 1, 1]
    return table


def test_prompt_filters_order_and_counts():
    table = _matched()
    assert prompts.filter_prompts(table, prompts.B_BETTER).index.tolist() == ["1"]
    assert prompts.filter_prompts(table, prompts.B_WORSE).index.tolist() == ["2"]
    assert prompts.filter_prompts(table, prompts.ONLY_ONE).index.tolist() == ["3", "4"]
    assert prompts.ordered(table).index.tolist()[:2] == ["2", "1"]  # |−1| before |+0.5|
    counts = prompts.counts(table, 0, 1)
    assert counts == {"all": 4, "B better": 1, "B worse": 1, "only one run has it": 2,
                      "both": 2}


def test_prompt_table_view_names_columns_by_label_and_strips_the_system_prompt():
    view = prompts.table_view(_matched(), ["base", "abl"], 0, 1, DisplayOptions())
    assert view["prompt"].tolist()[0] == "Q1"
    assert {"base · reward", "abl · pass", "Δ reward (abl − base)", "runs with it"} <= set(
        view.columns)
    # the review's S5: a difference of two pass rates, shown in percentage points
    table = _matched().head(prompts.MAX_ROWS)
    np.testing.assert_allclose(view["Δ pass (abl − base)"],
                               table[prompts.DELTA_PASS].to_numpy() * 100)


def test_answers_view_numbers_first_key_last_and_summary_line():
    rows = pd.DataFrame({S.KEY: ["f:1", "f:2"], S.REWARD: [1.0, 0.0], S.RESPONSE_LEN: [5, 7],
                         S.kl_mean(S.K3): [0.1, 0.3]})
    view = prompts.answers_view(rows, S.K3)
    assert view.columns.tolist() == ["reward", "length", "KL (k3)", "sample"]
    assert view["sample"].tolist() == ["f:1", "f:2"]
    assert prompts.summary_line(rows, S.K3) == ("2 answers · reward mean 0.5 · length mean 6 · "
                                                 "KL 0.2")
    assert prompts.summary_line(rows.iloc[:0], S.K3).startswith("no answer")
