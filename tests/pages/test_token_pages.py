"""The Sample page on a 32,768-token response through the real board: the window moves by
pager, position box, URL, strip selection and top-token jumps; the page stays bounded."""
import json
import math
import re

import pytest
from apptest import board, errors, texts
from streamlit.proto.WidgetStates_pb2 import WidgetState
from token_dumps import SPIKE_LOG_RATIO, long_sample, write_long_dump

N = 32_768
SPIKE = 20_000
LONG = "rollout_data_rank_0.jsonl:1"


@pytest.fixture(scope="module")
def long_dump(tmp_path_factory):
    return write_long_dump(tmp_path_factory.mktemp("long") / "run", n=N, spike=SPIKE)


def _open(root, **params):
    at = board(root, page="sample", step="0", sample=LONG, **params)
    assert not errors(at), errors(at)
    return at


def _window_positions(at) -> list[int]:
    markup = "".join(h.proto.body for h in at.get("html"))
    return [int(i) for i in re.findall(r'class="tok"[^>]*title="#(\d+) ', markup)]


def _select(at, element, state: dict):
    """Send a selection event for a chart or table, as the browser would."""
    states = at._tree.get_widget_states()
    states.widgets.append(WidgetState(id=element.proto.id, string_value=json.dumps(state)))
    return at._run(states)


def _param(at, name):
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


def test_window_is_bounded_and_pages_through(long_dump):
    at = _open(long_dump)
    assert f"{N} tokens (pad tokens dropped)" in texts(at)
    assert _window_positions(at) == list(range(256))
    assert not at.dataframe  # the window's table waits for its toggle
    at = at.toggle(key="w_table").set_value(True).run()
    assert at.dataframe[-1].value["position"].tolist() == list(range(256))
    linked = _open(long_dump, w_table="true")  # the copied link keeps the table open
    assert linked.dataframe[-1].value["position"].tolist() == list(range(256))
    at = at.button(key="w_next").click().run()
    assert _window_positions(at)[0] == 256 and _param(at, "window") == "256"
    at = at.button(key="w_prev").click().run()
    assert _window_positions(at)[0] == 0
    at = at.button(key="w_prev").click().run()  # never before the first token
    assert _window_positions(at)[0] == 0


def test_position_box_and_url_move_the_window(long_dump):
    at = _open(long_dump)
    at = at.number_input(key="window").set_value(31_000).run()
    assert _window_positions(at) == list(range(31_000, 31_256))
    assert "tokens 31000–31255 of 32768" in texts(at)
    again = _open(long_dump, window="31000")  # the copied link
    assert _window_positions(again) == list(range(31_000, 31_256))
    last = _open(long_dump, window="99999")  # past the end: the last whole window (the
    assert _window_positions(last) == list(range(N - 256, N))  # review's D5: one token)
    at = at.number_input(key="window").set_value(40_000).run()  # typed past it: the same
    assert _window_positions(at) == list(range(N - 256, N))
    assert f"tokens {N - 256}–{N - 1} of {N}" in texts(at)


def _jumps(at):
    """The ranked bars a click picks (Sample's jump list, Tokens' hottest strings)."""
    return [e for e in at.main if getattr(e, "type", "") == "vega_lite_chart"
            and '"name": "bar"' in e.proto.spec][0]


def _chart_data(chart):
    import pyarrow as pa

    return pa.ipc.open_stream(chart.proto.data.data).read_all().to_pandas()


def test_top_token_bar_jumps_the_window_to_the_spike(long_dump):
    at = _open(long_dump)
    top = _chart_data(_jumps(at))
    assert top["position"].iloc[0] == SPIKE  # the largest |log_ratio|, the first bar
    assert top["value"].iloc[0] == pytest.approx(SPIKE_LOG_RATIO)
    assert "⟦" in top["context"].iloc[0] and top["label"].iloc[0].startswith(f"{SPIKE} ⟦")
    assert len(top) == 20  # the top 20
    at = _select(at, _jumps(at), {"selection": {"bar": [{"rank": 0}]}})
    positions = _window_positions(at)
    assert SPIKE in positions and positions[0] == SPIKE - 64
    assert _param(at, "window") == str(SPIKE - 64)
    at = _select(at, _jumps(at), {"selection": {"bar": [{"rank": "x"}]}})  # names no bar
    assert _window_positions(at)[0] == SPIKE - 64 and not errors(at)


def _strips(at) -> list:
    """The token strips: the Vega-Lite charts that can be brushed (not a turn chart)."""
    return [e for e in at.main if getattr(e, "type", "") == "vega_lite_chart"
            and '"brush"' in e.proto.spec]


def test_brushing_a_strip_moves_the_window(long_dump):
    at = _open(long_dump)
    at = _select(at, _strips(at)[0], {"selection": {"brush": {"token": [12_345.0, 12_400]}}})
    assert _window_positions(at)[0] == 12_345
    at = _select(at, _strips(at)[-1], {"selection": {"brush": {"token": [30_000.2,
                                                                         25_000.7]}}})
    assert _window_positions(at)[0] == 25_001  # the first token whose centre is inside


def test_threshold_lists_only_the_tokens_past_it(long_dump):
    at = _open(long_dump)
    at = at.number_input(key="thr").set_value(5.0).run()
    table = _chart_data(_jumps(at))
    assert table["position"].tolist() == [SPIKE]
    assert "1 tokens past 5" in texts(at)


def test_another_sample_starts_at_its_beginning(long_dump):
    at = _open(long_dump, window="20000")
    at = at.selectbox(key="sample").set_value("rollout_data_rank_0.jsonl:2").run()
    assert _window_positions(at)[0] == 0


# ---- the Tokens page: position x step heatmap and the step's hottest tokens ---------------

@pytest.fixture(scope="module")
def steps_dump(tmp_path_factory):
    root = tmp_path_factory.mktemp("steps") / "run"
    samples = [long_sample(1500 + 300 * step, step=step, seed=i,
                           spike=1200 if (step, i) == (2, 1) else None)
               for step in range(4) for i in range(3)]
    (root).mkdir(parents=True)
    (root / "rollout_data_rank_0.jsonl").write_bytes(b"".join(
        json.dumps(s).encode() + b"\n" for s in samples))
    return root


def _heat(at):
    """The Tokens page's heatmap: the Vega-Lite chart a click picks a row of."""
    return [e for e in at.main if getattr(e, "type", "") == "vega_lite_chart"
            and '"pick"' in e.proto.spec][0]


def _bin_labels(chart) -> list[str]:
    """The heatmap's x labels left to right: its spec sorts them by the data's order column."""
    import pyarrow as pa

    assert json.loads(chart.proto.spec)["layer"][0]["encoding"]["x"]["sort"] == {
        "field": "order"}
    data = pa.ipc.open_stream(chart.proto.data.data).read_all().to_pandas()
    return data.drop_duplicates("order").sort_values("order")["bin"].tolist()


def test_tokens_page_heatmap_click_chooses_the_step(steps_dump):
    at = board(steps_dump, page="tokens", step="0")
    assert not errors(at), errors(at)
    assert not at.get("plotly_chart")  # the page loads no Plotly
    spec = json.loads(_heat(at).proto.spec)
    labels = _bin_labels(_heat(at))
    assert len(labels) == 32 and labels[0] == "0–3 %"
    assert spec["layer"][1]["encoding"]["y"]["datum"] == -0.5  # step 0's row outlined
    at = _select(at, _heat(at), {"selection": {"pick": [{"first": 2}]}})
    assert _param(at, "step") == "2" and "Tokens · step 2" in texts(at)
    assert json.loads(_heat(at).proto.spec)["layer"][1]["encoding"]["y"]["datum"] == 1.5
    at = at.segmented_control(key="tok_scale").set_value("absolute").run()
    labels = _bin_labels(_heat(at))
    assert labels[:2] == ["0–511", "512–1023"] and len(labels) == 5


def test_hot_token_bar_opens_the_sample_at_that_token(steps_dump):
    at = board(steps_dump, page="tokens", step="2")
    assert not at.dataframe  # bars, not a data grid
    hot = _chart_data(_jumps(at))
    first = hot.iloc[0]
    spike_k3 = math.expm1(-SPIKE_LOG_RATIO) + SPIKE_LOG_RATIO
    assert first["k3 largest"] == pytest.approx(spike_k3, rel=1e-4)  # the spike leads
    assert first["sample"] == "rollout_data_rank_0.jsonl:8" and first["position"] == 1200
    assert first["label"].startswith("1. ⟦") and first["length"] == first["k3 sum"]
    assert hot["k3 sum"].is_monotonic_decreasing
    at = _select(at, _jumps(at), {"selection": {"bar": [{"rank": 0}]}})
    assert "Sample · step 2" in texts(at)
    assert at.selectbox(key="sample").value == "rollout_data_rank_0.jsonl:8"
    assert 1200 in _window_positions(at) and _window_positions(at)[0] == 1200 - 64


def test_turn_starts_are_marked_on_the_strips(tmp_path):
    from conversation_fixtures import native_agent

    at = board(native_agent(tmp_path / "agent"), page="sample", step="0",
               sample="rollout_data_rank0.jsonl:1")
    assert not errors(at), errors(at)
    (stack,) = _strips(at)  # one chart, a view a strip
    spec = json.loads(stack.proto.spec)["vconcat"][0]
    labels = [layer["data"]["values"] for layer in spec["layer"]
              if layer["mark"]["type"] == "text"][0]
    assert [(v["token"], v["label"]) for v in labels] == [(3, "turn 3"), (7, "turn 4")]
