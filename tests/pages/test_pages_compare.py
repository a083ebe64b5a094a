"""RL vs reference page through the real board."""
from apptest import board, current_page, texts
from dump_files import LOSING_PROMPT

from loaders import schema as S
from pages.figures import compare


def _bars(at):
    """The never-beaten prompts' bars: the Vega-Lite chart a click picks a prompt in."""
    return [e for e in at.main if getattr(e, "type", "") == "vega_lite_chart"
            and e.proto.id.endswith("c_never")][0]


def _chart_data(chart):
    import pyarrow as pa

    return pa.ipc.open_stream(chart.proto.data.data).read_all().to_pandas()


def _select(at, element, state: dict):
    """Send a chart's selection event, as the browser would."""
    import json

    from streamlit.proto.WidgetStates_pb2 import WidgetState

    states = at._tree.get_widget_states()
    states.widgets.append(WidgetState(id=element.proto.id, string_value=json.dumps(state)))
    return at._run(states)


def test_curves_table_and_never_beaten_prompts(board_dump):
    at = board(board_dump, page="compare")
    assert not at.exception, at.exception
    # reward, length and win rate, and the never-beaten prompts' bars: Vega-Lite charts
    assert len(at.get("vega_lite_chart")) == 4 and not at.get("plotly_chart")
    never = _chart_data(_bars(at))
    assert list(never[compare.PROMPT_PREVIEW]) == [LOSING_PROMPT]
    assert never["label"].iloc[0].startswith("1. ")
    assert not at.dataframe  # both tables are drawn once their expanders open
    opened = board(board_dump, page="compare", cmp_table="true")
    assert len(opened.dataframe[0].value) == 3
    listed = board(board_dump, page="compare", cmp_never="true")
    table = listed.dataframe(key="t_never").value
    assert list(table[compare.PROMPT_PREVIEW]) == [LOSING_PROMPT]
    assert list(table[S.PROMPT_ID].astype(str)) == list(never[S.PROMPT_ID])


def test_picking_a_prompt_lists_its_samples_and_opens_one(board_dump):
    at = board(board_dump, page="compare")
    at = _select(at, _bars(at), {"selection": {"bar": [{"rank": 0}]}})
    listed = at.dataframe[-1].value
    assert len(listed) == 6 and set(listed[S.PROMPT]) == {LOSING_PROMPT}
    choice = at.selectbox(key="w_cmp_open")
    target = [o for o in choice.options if o.startswith("rollout_data_rank_1.jsonl")][0]
    choice.set_value(target).run()
    at.button(key="b_cmp_open").click().run()
    assert current_page(at) == "sample"
    assert at.selectbox(key="sample").value == target
    assert "Sample · step 0" in texts(at)


def test_smoothing_slider(board_dump):
    at = board(board_dump, page="compare")
    at.slider(key="cmp_ema").set_value(0.5).run()
    assert not at.exception


def test_the_never_beaten_numbers_are_kept_beside_the_index(board_dump):
    import pyarrow.parquet as pq

    board(board_dump, page="compare")  # the page keeps the numbers beside the index
    kept = sorted((board_dump / ".rl_board_cache" / "derived").glob("never_beaten*.parquet"))
    assert [p.name.split(".")[0] for p in kept] == ["never_beaten", "never_beaten_once"]
    table = pq.read_table(kept[0]).to_pandas()  # numbers only: the previews are read by row
    assert S.PROMPT not in table and compare.PROMPT_PREVIEW not in table
    shown = board(board_dump, page="compare", cmp_never="true").dataframe(key="t_never").value
    assert list(table[S.PROMPT_ID]) == list(shown[S.PROMPT_ID])
    assert list(table[compare.MEAN_GAP]) == list(shown[compare.MEAN_GAP])


def test_a_row_of_the_whole_table_picks_a_prompt_too(board_dump):
    at = board(board_dump, page="compare", cmp_never="true")
    assert len(at.dataframe) == 1  # nothing listed before a pick
    at.session_state["t_never"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    listed = at.dataframe[-1].value
    assert len(listed) == 6 and set(listed[S.PROMPT]) == {LOSING_PROMPT}


def test_a_double_click_on_the_bars_clears_the_pick(board_dump):
    at = board(board_dump, page="compare")
    at = _select(at, _bars(at), {"selection": {"bar": [{"rank": 0}]}})
    assert len(at.dataframe) == 1  # its samples
    at = _select(at, _bars(at), {"selection": {"bar": []}})
    assert not at.dataframe and not at.exception
