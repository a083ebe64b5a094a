"""pages.figures.prompts.history_chart: one prompt's group over the run as Vega-Lite: reward
mean and pass rate on the left axis, length on the right, a cross where the group had no
reward variance."""
import json

import numpy as np
import pandas as pd

from loaders import schema as S
from pages.figures import prompts


def _steps() -> pd.DataFrame:
    return pd.DataFrame({
        S.STEP: [3, 7, 12], S.stat(S.REWARD, "mean"): [0.0, 0.5, 1.0],
        S.PASS_RATE: [0.0, 0.5, 1.0], S.stat(S.RESPONSE_LEN, "mean"): [210.0, 180.0, np.nan],
        S.ZERO_VARIANCE: [True, False, True], S.GROUP_SIZE: [8, 8, 8],
        S.GROUP_ID: ["a", "b", "c"]})


def test_each_series_at_the_steps_the_prompt_appears():
    chart = prompts.history_chart(_steps())
    by = {name: rows for name, rows in chart.data.groupby("series")}
    assert by["reward mean"][S.STEP].tolist() == [3, 7, 12]
    assert by["pass rate"]["value"].tolist() == [0.0, 0.5, 1.0]
    assert by["length mean"][S.STEP].tolist() == [3, 7]  # no length logged at step 12
    # the crosses: the steps whose group had one reward for every answer, at its pass rate
    assert by["zero variance"][[S.STEP, "value"]].values.tolist() == [[3, 0.0], [12, 1.0]]


def test_length_has_its_own_axis_on_the_right():
    spec = prompts.history_chart(_steps()).spec
    assert spec["resolve"] == {"scale": {"y": "independent"}}
    left, right = spec["layer"]
    assert right["encoding"]["y"]["axis"] == {"orient": "right"}
    assert right["transform"][0]["filter"]["oneOf"] == ["length mean"]
    assert [layer["transform"][0]["filter"]["oneOf"] for layer in left["layer"]] == [
        ["reward mean"], ["pass rate"], ["zero variance"]]
    # the reward mean wide and pale under the pass rate: with 0/1 rewards they coincide
    assert left["layer"][0]["mark"]["strokeWidth"] > left["layer"][1]["mark"].get(
        "strokeWidth", 2)
    text = json.dumps(spec)
    assert "expr" not in text and "signal" not in text  # fields and predicates only


def test_the_legend_names_only_what_is_drawn():
    steps = _steps().assign(**{S.ZERO_VARIANCE: False})
    spec = prompts.history_chart(steps).spec
    colour = spec["layer"][1]["encoding"]["color"]["scale"]
    assert colour["domain"] == ["reward mean", "pass rate", "length mean"]
    assert len(colour["range"]) == 3
    assert prompts.history_chart(_steps()).spec["layer"][1]["encoding"]["color"]["scale"][
        "domain"][-1] == "zero variance"


def test_prompts_that_read_the_same_after_their_system_prompts_show_them():
    """The review's S6: a question asked under two system prompts is two prompts, which the
    table showed as one row twice."""
    from pages.frame.view import DisplayOptions

    P = prompts
    columns = {c: [0, 0, 0] for c in P.COLUMNS}
    table = pd.DataFrame({S.PROMPT: ["Be brief.<endofsystem>What is 2+2?",
                                     "Think step by step.<endofsystem>What is 2+2?",
                                     "Be brief.<endofsystem>Name a gas."], **columns},
                         index=[11, 12, 13])
    rows = P.prompt_rows(table, DisplayOptions())
    assert rows[P.SYSTEM].tolist() == ["Be brief.", "Think step by step.", "Be brief."]
    assert P.SYSTEM not in P.prompt_rows(table.iloc[[0, 2]], DisplayOptions()).columns
