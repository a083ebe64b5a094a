"""Pure builders of the Health and Alerts views."""
import json

import numpy as np
import pandas as pd

from loaders import schema as S
from pages.figures import health as H


def test_stage_times_are_bars_a_step_wide_stacked_in_pipeline_order():
    stages = pd.DataFrame({"rollout / generation": [10.0, 12.0, 11.0],
                           "actor update": [5.0, np.nan, 4.0]}, index=[1, 2, 3])
    chart = H.stage_times_chart(stages)
    rows = chart.data.set_index(["step", "stage"])
    # each stage on the ones before it, in the columns' order; a step without a timer of a
    # stage has no bar of it
    assert rows.loc[(1, "rollout / generation"), ["low", "high"]].tolist() == [0.0, 10.0]
    assert rows.loc[(1, "actor update"), ["low", "high"]].tolist() == [10.0, 15.0]
    assert rows.loc[(3, "actor update"), ["low", "high"]].tolist() == [11.0, 15.0]
    assert (2, "actor update") not in rows.index and len(rows) == 5
    assert (chart.data["to"] - chart.data["from"]).round(2).eq(0.9).all()
    colour = chart.spec["encoding"]["color"]
    assert colour["scale"]["domain"] == list(stages.columns)
    assert chart.spec["mark"]["type"] == "rect" and chart.spec["encoding"]["y2"]["field"] == "high"


def test_memory_as_fraction_of_the_device_total():
    metrics = pd.DataFrame({"mem/reserved": [40.0, 60.0], "mem/total": [80.0, 80.0]},
                           index=[1, 2])
    chart = H.memory_chart(metrics, {"reserved": ["mem/reserved"], "total": ["mem/total"]},
                           step=2)
    np.testing.assert_allclose(chart.data["value"], [0.5, 0.75])
    assert "fraction of device memory" in chart.spec["title"]["text"]
    rules = [layer["encoding"] for layer in chart.spec["layer"]
             if layer["mark"]["type"] == "rule"]
    assert {"x": {"datum": 2}} in rules and {"y": {"datum": 1.0}} in rules  # step, the limit


def test_memory_as_logged_without_a_total():
    name = "<b>mem</b>/allocated"  # a metric's name: a data value, drawn as text
    metrics = pd.DataFrame({name: [1.0, 2.0]}, index=[1, 2])
    chart = H.memory_chart(metrics, {"allocated": [name]})
    np.testing.assert_allclose(chart.data["value"], [1.0, 2.0])
    assert set(chart.data["series"]) == {name} and "as logged" in chart.spec["title"]["text"]
    assert not [layer for layer in chart.spec["layer"] if layer["mark"]["type"] == "rule"]
    assert "expr" not in json.dumps(chart.spec)


def test_rank_heatmap_rows_are_ranks():
    table = pd.DataFrame([[1.0, 2.0], [3.0, 4.0]], index=[0, 1], columns=[5, 6])
    table.iloc[1, 0] = np.nan  # rank 1 had no sample at step 5: no cell
    chart = H.rank_heatmap(table, "tokens")
    assert chart.data[["rank", "step", "value"]].values.tolist() == [
        ["rank 0", 5.0, 1.0], ["rank 0", 6.0, 2.0], ["rank 1", 6.0, 4.0]]
    assert chart.spec["encoding"]["y"]["sort"] == ["rank 0", "rank 1"]
    assert (chart.data["to"] - chart.data["from"] == 1.0).all()
    assert H.rank_heatmap(pd.DataFrame(), "memory").data.empty
    # the review's D7: every rank's 1,024 samples read "1,024.000000" in the legend
    assert chart.spec["encoding"]["color"]["legend"]["format"] == ",.4~g"


def test_stability_panels_one_a_signal_with_the_step_and_alerts_and_none_missing():
    signals = pd.DataFrame({S.H_REWARD: [0.1, 0.2], S.H_KL: [np.nan, np.nan],
                            S.H_GRAD_NORM: [1.0, 1.1]}, index=[1, 2])
    panels = H.stability_panels(signals, pd.Series([0.01, 0.02], index=[1, 2]), step=2,
                                alerts=(1,))
    assert [p.spec["title"]["text"] for p in panels] == ["reward", "grad norm",
                                                          "clip fraction"]
    for chart in panels:
        assert chart.data["step"].tolist() == [1.0, 2.0]
        marks = [layer["mark"]["type"] for layer in chart.spec["layer"]]
        assert marks[0] == "rect" and marks[-1] == "rule"  # the alert's band, the step
        assert chart.spec["layer"][-1]["encoding"]["x"] == {"datum": 2}
        assert all(layer.get("encoding", {}).get("color", {}).get("legend", None) is None
                   for layer in chart.spec["layer"])  # the title names the curve
    np.testing.assert_allclose(panels[2].data["value"], [0.01, 0.02])
    assert H.stability_panels(pd.DataFrame()) == []



def test_quality_panels_lengths_and_truncation_with_the_inferred_part_dotted():
    table = pd.DataFrame({"response tokens min": [10.0, 12.0],
                          "response tokens mean": [50.0, 60.0],
                          "response tokens max": [512.0, 512.0],
                          "truncation ratio": [0.25, 0.5],
                          "truncation inferred": [0.0, 0.25]}, index=[1, 2])
    lengths, truncation = H.quality_panels(table, step=2)
    assert list(dict.fromkeys(lengths.data["series"])) == ["min", "mean", "max"]
    assert lengths.data["value"].tolist() == [10.0, 12.0, 50.0, 60.0, 512.0, 512.0]
    by = truncation.data.groupby("series")["value"].apply(list).to_dict()
    assert by == {"truncation ratio": [0.25, 0.5],
                  "of it inferred from the length cap": [0.0, 0.25]}
    dashes = truncation.spec["layer"][0]["encoding"]["strokeDash"]["scale"]["range"]
    assert dashes[1] != dashes[0]  # the inferred part dotted
    _, plain = H.quality_panels(table.assign(**{"truncation inferred": 0.0}))
    assert set(plain.data["series"]) == {"truncation ratio"}  # nothing inferred: no curve
    line = next(layer for layer in truncation.spec["layer"] if layer["mark"]["type"] == "line"
                and layer["encoding"]["y"]["field"] == "value")
    assert line["encoding"]["y"]["scale"] == {"domain": [0, 1]}  # a share on all of 0..1
