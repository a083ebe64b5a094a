"""A reward's components on the Rewards page, through the real app and the loaders."""
import json

import numpy as np
import pandas as pd
import pytest
from apptest import board, current_page, errors, goto, texts
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.health import rewards as parts
from pages.figures import reward_parts as build
from pages.figures import rewards

HACKS = {(1, 3), (1, 7), (2, 5)}  # (step, sample): right format, wrong answer


def _sample(step: int, i: int) -> dict:
    accuracy = 0.0 if (step, i) in HACKS else float(i % 2)
    fmt = 1.0 if (step, i) in HACKS else 0.5
    return make_sample(step, seed=i, accuracy_reward=accuracy, format_reward=fmt,
                       reward=accuracy + fmt)


@pytest.fixture(scope="module")
def components_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("parts")
    write_dump(root / "rollout_data_rank_0.jsonl",
               [_sample(step, i) for step in (1, 2) for i in range(8)])
    return root


def test_the_parts_add_up_and_the_planted_hacks_are_found(components_run):
    run = open_run(components_run, use_cache=False)
    rows = run.step_rows(1)
    names = parts.components(rows)
    assert names == ["accuracy_reward", "format_reward"] and parts.add_up(rows, names)
    found = parts.disagreements(rows, names)
    hacked = found[(found["high"] == "format_reward") & (found["low"] == "accuracy_reward")]
    assert set(hacked[S.KEY]) == {f"rollout_data_rank_0.jsonl:{i + 1}" for s, i in HACKS
                                  if s == 1}
    # and the other way round: the answer right at a format worse than the step's best
    other = found[found["high"] == "accuracy_reward"]
    assert set(other[S.KEY]) == {f"rollout_data_rank_0.jsonl:{i + 1}" for i in (1, 5)}
    table = parts.means_by_step_of(run.numbers, names)
    assert table.loc[1, "format_reward"] == pytest.approx((6 * 0.5 + 2 * 1.0) / 8)
    corr = parts.correlations(rows, names)
    assert corr.loc["accuracy_reward", "format_reward"] < 0


def test_rewards_page_shows_the_components_over_the_run_and_at_the_step(components_run):
    at = board(components_run, page="rewards", step="1", chart="Components", dist="Components")
    assert not errors(at)
    assert not at.get("plotly_chart")  # Vega-Lite: the tab loads no Plotly script
    specs = " ".join(c.proto.spec for c in at.get("vega_lite_chart"))
    assert "reward components, mean per step (stacked: they add up" in specs
    assert "accuracy_reward (8 samples; click a bar" in specs  # the first component's bars
    corr = next(d.value for d in at.dataframe if "accuracy_reward" in d.value.index)
    assert corr.loc["accuracy_reward", "format_reward"] < 0
    assert "4 samples where one component is at the step's best" in texts(at)
    assert len(at.dataframe(key="t_disagree").value) == 4


def test_a_components_chart_and_a_histogram_bar_picked():
    table = pd.DataFrame({"acc": [0.2, 0.4], "fmt": [0.5, 0.5], S.REWARD: [0.7, 0.9]},
                         index=pd.Index([1, 2], name=S.STEP))
    chart = build.components_chart(table, ["acc", "fmt"], add_up=True)
    parts_layer, reward_layer = chart.spec["layer"]
    assert parts_layer["mark"]["type"] == "area" and parts_layer["encoding"]["y"]["stack"]
    assert reward_layer["encoding"]["y"]["stack"] is None  # over the stack, not on it
    assert chart.data.groupby("series")["value"].sum().round(2).to_dict() == {
        "acc": 0.6, "fmt": 1.0, "reward (mean)": 1.6}
    lines = build.components_chart(table, ["acc", "fmt"], add_up=False)
    assert lines.spec["layer"][0]["mark"]["type"] == "line"
    rows = pd.DataFrame({"fmt": [0.5] * 6 + [1.0] * 2 + [np.nan]})
    hist = build.component_histogram(rows, "fmt")
    assert hist.data["count"].sum() == 8 and set(hist.data["column"]) == {"fmt"}
    assert build.component_histogram(pd.DataFrame({"fmt": [np.nan]}), "fmt") is None
    # a click on a bar: its column and bounds, for this histogram's column only
    sent = {rewards.BIN: [{"column": "fmt", "low": 0.9833, "high": 1.0}]}
    assert rewards.picked_bin(sent, ("fmt",)) == ("fmt", 0.9833, 1.0)
    assert rewards.picked_bin(sent) is None  # the reward histogram's own columns only


def test_responses_keep_a_columns_range_as_a_bar_click_asks(components_run):
    at = board(components_run, page="responses", step="1", fcol="format_reward",
               frange=["0.75", "1.0"])
    assert not errors(at)
    table = at.dataframe[0].value
    assert len(table) == 2 and (table["format_reward"] == 1.0).all()
    whole = goto(board(components_run, step="1"), "responses")
    assert len(whole.dataframe[0].value) == 8 and current_page(whole) == "responses"


HOSTILE = '<img src=x onerror="window.pwned=1">Format_Reward'  # the dump's own key


def test_a_component_named_with_any_text_draws_its_chart_and_stays_data(tmp_path):
    """A component's name is the dump's key: upper case and markup included.  Its means are
    kept under a digest of the names (a kept table's name is a file name), and the name is
    a data value of the charts, never part of the spec."""
    samples = [make_sample(step, seed=i, accuracy_reward=float(i % 2), reward=float(i % 2))
               | {HOSTILE: 0.25 * (i % 3)} for step in (1, 2) for i in range(6)]
    root = write_dump(tmp_path / "run" / "rollout_data_rank_0.jsonl", samples).parent
    assert parts.means_table_name([HOSTILE, "accuracy_reward"]).startswith("reward_components-")
    at = board(root, page="rewards", step="2", chart="Components", dist="Components",
               component=HOSTILE)
    assert not errors(at) and not at.exception, at.exception
    specs = [c.proto.spec for c in at.get("vega_lite_chart")]
    assert "reward components, mean per step" in specs[0]
    assert HOSTILE not in specs[0]  # over the run: the name is a row's value, not the spec's
    assert len(specs) == 2  # its histogram: the name its title's text, drawn as it is
    assert json.loads(specs[1])["title"]["text"].startswith(HOSTILE)
    # reopened, the kept table is read back under the same name
    again = board(root, page="rewards", step="2", chart="Components")
    assert not again.exception and not errors(again)
