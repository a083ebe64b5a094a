"""The Tokens page's heatmap (pages/figures/token_heat.py): a row a step, or a window of
steps past MAX_ROWS, each window's means weighted by its tokens; a click picks a row."""
import math

import numpy as np
import pytest

from pages.figures import token_heat as H


def _grid(steps: int, bins: int = 4, seed: int = 0) -> tuple[list[int], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    means = rng.normal(size=(steps, bins))
    tokens = rng.integers(0, 50, size=(steps, bins)).astype(float)
    means[tokens == 0] = math.nan  # a bin no token of the step fell in
    return list(range(0, 3 * steps, 3)), means, tokens


def test_a_short_run_draws_a_row_a_step():
    steps, means, tokens = _grid(12)
    heat = H.position_step_chart(steps, ["a", "b", "c", "d"], means, tokens, "k3", 9)
    assert heat.steps_a_row == 1
    assert sorted(set(heat.data[H.FIRST])) == steps
    assert (heat.data[H.FIRST] == heat.data[H.LAST]).all()
    assert len(heat.data) == int(np.isfinite(means).sum())  # a cell without tokens: none
    assert heat.spec["layer"][1]["encoding"]["y"]["datum"] == 8.5  # step 9's row outlined
    assert heat.spec["layer"][1]["data"] == {"values": [{}]}  # one outline, not one a cell
    # the bins' left-to-right order is a column of the data, in the labels' order
    assert heat.spec["layer"][0]["encoding"]["x"]["sort"] == {"field": H.ORDER}
    for label, order in zip(heat.data[H.BIN], heat.data[H.ORDER]):
        assert "abcd".index(label) == order
    assert heat.spec["config"] == {"aria": False}  # no ARIA text a cell (SVG output only)


def test_a_long_run_draws_windows_of_steps_weighted_by_their_tokens():
    steps, means, tokens = _grid(1000)
    firsts, lasts, mean, count = H.windows(steps, means, tokens)
    assert len(firsts) == H.MAX_ROWS and firsts[1] - firsts[0] == 30  # 10 steps a row
    assert (firsts[0], lasts[0], lasts[-1]) == (0, 27, steps[-1])
    window = slice(10, 20)  # the second row, by hand
    weight = np.where(np.isfinite(means[window]), tokens[window], 0.0)
    want = (np.nan_to_num(means[window]) * weight).sum(axis=0) / weight.sum(axis=0)
    np.testing.assert_allclose(mean[1], want)
    np.testing.assert_array_equal(count[1], tokens[window].sum(axis=0))
    heat = H.position_step_chart(steps, list("abcd"), means, tokens, "k3", 40)
    assert heat.steps_a_row == 10 and heat.data[H.ROW].max() == H.MAX_ROWS - 1
    outline = heat.spec["layer"][1]["encoding"]
    assert (outline["y"]["datum"], outline["y2"]["datum"]) == (29.5, 57.5)  # steps 30-57
    assert heat.spec["height"] <= 900


def test_a_run_of_a_few_more_steps_than_rows_keeps_its_last_row_short():
    steps, means, tokens = _grid(H.MAX_ROWS + 1)
    firsts, lasts, mean, _ = H.windows(steps, means, tokens)
    assert len(firsts) == H.MAX_ROWS // 2 + 1 and firsts[-1] == lasts[-1] == steps[-1]
    np.testing.assert_array_equal(mean[-1], means[-1])  # a row of one step: its own means


@pytest.mark.parametrize("selection, step", [
    ({"pick": [{"first": 12}]}, 12), ({"pick": [{"first": 12.0}]}, 12), ({"pick": []}, None),
    ({}, None), ({"pick": [{"other": 3}]}, None), ({"pick": [{"first": "x"}]}, None),
    ({"pick": [{"first": None}]}, None), ({"pick": [{"first": float("nan")}]}, None)])
def test_a_click_names_its_rows_first_step_or_none(selection, step):
    assert H.step_of_pick(selection) == step


def test_no_grid_draws_no_cell():
    heat = H.position_step_chart([], [], np.zeros((0, 0)), np.zeros((0, 0)), "k3", None)
    assert heat.data.empty and len(heat.spec["layer"]) == 1


def test_a_non_negative_metric_is_sequential_and_an_outlier_cell_is_clipped():
    """The review's S1: k3 (never below 0) on a blue-white-red scale, and one cell at 0.05
    made every other cell the same dark blue."""
    means = np.full(400, 0.001) + np.linspace(0, 0.002, 400)
    means[7] = 0.05  # the outlier
    scale = H.colour_scale(means, "k3")
    assert scale["scheme"] == "orangered" and "domainMid" not in scale and scale["clamp"]
    assert scale["domain"][1] < 0.01  # the 99th percentile, not the outlier
    signed = H.colour_scale(np.linspace(-1, 2, 400), "log_ratio")
    assert signed["scheme"] == "redblue" and signed["domainMid"] == 0
    few = H.colour_scale(np.array([0.0, 0.5, 3.0]), "entropy")
    assert few["domain"] == [0.0, 3.0]  # too few cells to clip: min and max
    assert H.colour_scale(np.array([-3.0, -1.0]), "logprob")["reverse"]  # low is hot
