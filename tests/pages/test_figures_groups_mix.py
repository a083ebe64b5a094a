"""pages.figures.groups.mix_chart: the group mix over the run, as Vega-Lite stacked shares
and the zero-variance share dotted."""
import numpy as np
import pandas as pd

from loaders import schema as S
from pages.figures import groups


def _steps() -> pd.DataFrame:
    # step 1: two solved groups and one unsolved; step 2: one of each kind
    return pd.DataFrame({S.STEP: [1, 1, 1, 2, 2, 2],
                         S.PASS_RATE: [1.0, 1.0, 0.0, 1.0, 0.5, 0.0],
                         S.ZERO_VARIANCE: [True, False, True, True, False, False]})


def test_the_shares_of_each_kind_and_of_zero_variance_a_step():
    chart = groups.mix_chart(_steps(), step=2)
    share = chart.data.set_index(["series", S.STEP])["share"]
    assert share[("solved", 1.0)] == 2 / 3 and share[("unsolved", 1.0)] == 1 / 3
    assert share[("mixed", 1.0)] == 0.0 and share[("mixed", 2.0)] == 1 / 3
    np.testing.assert_allclose([share[("zero variance", 1.0)], share[("zero variance", 2.0)]],
                               [2 / 3, 1 / 3])
    # each step's kinds add up to the whole
    kinds = chart.data[chart.data["series"] != "zero variance"]
    np.testing.assert_allclose(kinds.groupby(S.STEP)["share"].sum(), [1.0, 1.0])
    area, line, rule = chart.spec["layer"]
    assert area["transform"][0]["filter"]["oneOf"] == ["solved", "mixed", "unsolved"]
    assert area["encoding"]["y"]["stack"] == "zero" and line["mark"]["strokeDash"]
    assert rule["encoding"]["x"] == {"datum": 2}


def test_a_kind_no_group_had_is_not_drawn():
    solved = _steps().assign(**{S.PASS_RATE: 1.0})
    chart = groups.mix_chart(solved)
    assert set(chart.data["series"]) == {"solved", "zero variance"}
    assert chart.spec["layer"][0]["encoding"]["color"]["scale"]["domain"] == [
        "solved", "zero variance"]
