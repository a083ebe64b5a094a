"""RL vs reference page through the real board."""
from apptest import board, current_page, texts
from dump_files import LOSING_PROMPT

from loaders import schema as S
from pages.figures import compare


def test_curves_table_and_never_beaten_prompts(board_dump):
    at = board(board_dump, page="compare")
    assert not at.exception, at.exception
    # reward, length and win rate, each a Vega-Lite chart (no Plotly on this page)
    assert len(at.get("vega_lite_chart")) == 3 and not at.get("plotly_chart")
    never = at.dataframe(key="t_never").value
    assert list(never[compare.PROMPT_PREVIEW]) == [LOSING_PROMPT]
    assert len(at.dataframe) == 1  # the per-step table is drawn once its expander opens
    opened = board(board_dump, page="compare", cmp_table="true")
    assert len(opened.dataframe[0].value) == 3


def test_picking_a_prompt_lists_its_samples_and_opens_one(board_dump):
    at = board(board_dump, page="compare")
    at.session_state["t_never"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
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

    at = board(board_dump, page="compare")
    kept = sorted((board_dump / ".rl_board_cache" / "derived").glob("never_beaten*.parquet"))
    assert [p.name.split(".")[0] for p in kept] == ["never_beaten", "never_beaten_once"]
    table = pq.read_table(kept[0]).to_pandas()  # numbers only: the previews are read by row
    assert S.PROMPT not in table and compare.PROMPT_PREVIEW not in table
    shown = at.dataframe(key="t_never").value
    assert list(table[S.PROMPT_ID]) == list(shown[S.PROMPT_ID])
    assert list(table[compare.MEAN_GAP]) == list(shown[compare.MEAN_GAP])
