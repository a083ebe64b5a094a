"""A reward's components on the Rewards page, through the real app and the loaders."""
import pytest
from apptest import board, current_page, errors, goto, texts
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.health import rewards as parts
from pages.figures import reward_parts as build

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
    keys = [c.key for c in at.get("plotly_chart")]
    assert {"c_components", "c_component"} <= set(keys)
    corr = next(d.value for d in at.dataframe if "accuracy_reward" in d.value.index)
    assert corr.loc["accuracy_reward", "format_reward"] < 0
    assert "4 samples where one component is at the step's best" in texts(at)
    assert len(at.dataframe(key="t_disagree").value) == 4


def test_a_clicked_bar_is_its_column_and_bounds():
    points = [{"curve_number": 1, "customdata": [0.25, 0.5]}]
    assert build.picked_bin(points, ["reward", "ref_reward"]) == ("ref_reward", 0.25, 0.5)
    assert build.picked_bin([{"curve_number": 0}], ["reward"]) is None
    # as the browser sends it: the bounds' items keyed by their index
    sent = [{"curve_number": 0, "customdata": {"0": 1.25, "1": 1.5}}]
    assert build.picked_bin(sent, ["reward"]) == ("reward", 1.25, 1.5)


def test_responses_keep_a_columns_range_as_a_bar_click_asks(components_run):
    at = board(components_run, page="responses", step="1", fcol="format_reward",
               frange=["0.75", "1.0"])
    assert not errors(at)
    table = at.dataframe[0].value
    assert len(table) == 2 and (table["format_reward"] == 1.0).all()
    whole = goto(board(components_run, step="1"), "responses")
    assert len(whole.dataframe[0].value) == 8 and current_page(whole) == "responses"
