"""Rewards page through the real board."""
import json

from apptest import board, texts


def _vega(at) -> list[str]:
    return [chart.key for chart in at.get("vega_lite_chart")]


def test_curves_and_step_section(board_dump):
    at = board(board_dump, page="rewards")
    assert not at.exception
    # the padded sample's `acc` is a reward component: a Components tab in each row of tabs
    assert [t.label for t in at.tabs][:5] == ["Reward", "KL", "Response length", "Win rate",
                                              "Components"]
    assert "Step 2: 10 samples" in texts(at)
    # the open tab's curve, then the step's open distribution tab (histogram first): both
    # Vega-Lite, so a fresh page loads no Plotly
    assert _vega(at) == ["c_reward", "c_hist"] and not at.get("plotly_chart")
    assert [t.label for t in at.tabs][5:] == ["Histogram", "ECDF", "Reward gap", "Group means",
                                              "Components"]
    for tab, title in (("ECDF", "ECDF of reward"), ("Reward gap", "reward_gap sorted"),
                       ("Group means", "Group reward means")):
        shown = board(board_dump, page="rewards", dist=tab)  # that tab's chart alone below
        specs = [c.proto.spec for c in shown.get("vega_lite_chart")]
        assert len(specs) == 2 and title in specs[1] and not shown.get("plotly_chart")


def test_only_the_open_tab_is_drawn(board_dump):
    at = board(board_dump, page="rewards", chart="KL")
    keys = _vega(at)
    assert "c_kl" in keys and "c_reward" not in keys and not at.exception


def test_controls_change_the_figures(board_dump):
    at = board(board_dump, page="rewards")
    before = at.get("vega_lite_chart")[0].proto.spec
    at.slider(key="band").set_value(2.0).run()
    assert at.get("vega_lite_chart")[0].proto.spec != before
    assert "2·std" in json.loads(at.get("vega_lite_chart")[0].proto.spec)["title"]["text"]
    at.slider(key="ema").set_value(0.5).run()
    at.toggle(key="zero").set_value(True).run()
    assert not at.exception


def test_step_from_url_and_slider(board_dump):
    at = board(board_dump, page="rewards", step="0")
    assert "Step 0: 8 samples" in texts(at)
    at.sidebar.select_slider(key="step").set_value(1).run()
    assert "Step 1: 8 samples" in texts(at)


def test_clicking_a_curve_point_selects_its_step(board_dump):
    at = board(board_dump, page="rewards")
    at.session_state["c_reward"] = {"selection": {"pick": [{"step": 1}]}}
    at.run()
    assert at.sidebar.select_slider(key="step").value == 1
    assert "Step 1: 8 samples" in texts(at)


def test_a_clicked_point_does_not_pin_the_step(board_dump):
    at = board(board_dump, page="rewards")
    at.session_state["c_reward"] = {"selection": {"pick": [{"step": 0}]}}
    at.run()
    assert at.sidebar.select_slider(key="step").value == 0
    at.sidebar.select_slider(key="step").set_value(2).run()
    assert at.sidebar.select_slider(key="step").value == 2
    assert "Step 2: 10 samples" in texts(at)


def test_the_chosen_step_is_marked_on_the_curves(board_dump):
    at = board(board_dump, page="rewards", step="1")
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    rules = [layer for layer in spec["layer"] if layer["mark"]["type"] == "rule"]
    assert rules[-1]["encoding"]["x"]["datum"] == 1
