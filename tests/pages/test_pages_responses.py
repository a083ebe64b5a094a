"""Responses page through the real board."""
from apptest import board, current_page, texts
from dump_files import LOSING_PROMPT

from loaders import schema as S
from pages.routes.responses import table_key


def _responses(board_dump, **params):
    at = board(board_dump, page="responses", step="2", **params)
    assert not at.exception, at.exception
    return at


def test_table_has_the_step_and_the_columns(board_dump):
    at = _responses(board_dump)
    table = at.dataframe[0].value
    assert len(table) == 10
    for column in (S.PROMPT, S.RESPONSE, S.REWARD, S.GROUND_TRUTH, S.LOG_RATIO_MEAN,
                   S.LOG_RATIO_SUM, S.kl_mean(S.K3), S.kl_sum(S.K3), S.RESPONSE_LEN,
                   S.REF_RESPONSE, S.REF_REWARD, S.REWARD_GAP, "flags", "acc"):
        assert column in table.columns, column
    assert list(table[S.REWARD]) == sorted(table[S.REWARD], reverse=True)


def test_sorting_by_kl_and_direction(board_dump):
    at = _responses(board_dump)
    at.selectbox(key="sort").set_value("KL k3 mean").run()
    column = at.dataframe[0].value[S.kl_mean(S.K3)].dropna()
    assert list(column) == sorted(column, reverse=True)
    at.toggle(key="desc").set_value(False).run()
    column = at.dataframe[0].value[S.kl_mean(S.K3)].dropna()
    assert list(column) == sorted(column)


def test_sorting_by_any_column(board_dump):
    at = _responses(board_dump)
    at.selectbox(key="sort").set_value("(any column)").run()
    at.selectbox(key="col").set_value(S.VALUE_MEAN).run()
    assert not at.exception
    assert len(at.dataframe[0].value) == 10


def test_regex_search_filters_and_highlights(board_dump):
    at = _responses(board_dump)
    at.text_input(key="q").input("never wins").run()
    table = at.dataframe[0].value
    assert len(table) == 2 and set(table[S.PROMPT]) == {LOSING_PROMPT}
    html = "".join(h.proto.body for h in at.get("html"))
    assert "<mark>never wins</mark>" in html


def test_invalid_regex_is_reported(board_dump):
    at = _responses(board_dump)
    at.text_input(key="q").input("(unclosed").run()
    assert any("invalid regex" in e.value for e in at.error)
    assert len(at.dataframe[0].value) == 10


def test_filters_on_flags_and_reward(board_dump):
    at = _responses(board_dump)
    at.multiselect(key="flags").select(S.LENGTH_MISMATCH).run()
    table = at.dataframe[0].value
    assert len(table) == 1 and table["flags"].iloc[0] == "length mismatch"
    at.multiselect(key="flags").unselect(S.LENGTH_MISMATCH).run()
    low, high = at.slider(key="reward").value
    at.slider(key="reward").set_value((0.5, high)).run()
    assert (at.dataframe[0].value[S.REWARD] >= 0.5).all()


def test_selecting_a_row_opens_the_sample(board_dump):
    at = _responses(board_dump)
    first = at.dataframe[0].value["key"].iloc[0]
    at.session_state[table_key(S.REWARD, True)] = {"selection": {"rows": [0], "columns": [],
                                                                 "cells": []}}
    at.run()
    assert current_page(at) == "sample"
    assert at.selectbox(key="sample").value == first
    assert "Sample · step 2" in texts(at)


def test_a_step_with_an_infinite_and_a_missing_reward_shows_them_until_the_range_narrows(
        tmp_path):
    """A reward of Infinity (json.dumps writes it, as Python trainers do) and of NaN are shown
    by default: the reward slider's bounds are the finite rewards', and the whole slider
    filters nothing.  Narrowed, a range keeps the rewards in it (an end left at its bound
    open: inf stays in) and never a missing one."""
    import json
    import math

    from dump_files import make_sample

    rewards = [0.1, 0.5, 0.9, math.inf, math.nan]
    lines = [json.dumps(make_sample(1, seed=i, reward=r)) for i, r in enumerate(rewards)]
    (tmp_path / "rollout_data_rank_0.jsonl").write_text("\n".join(lines) + "\n")
    at = board(tmp_path, page="responses", step="1")
    assert not at.exception, at.exception
    assert len(at.dataframe[0].value) == 5
    low, high = at.slider(key="reward").value
    assert (low, high) == (0.1, 0.9)
    at.slider(key="reward").set_value((0.4, high)).run()
    assert sorted(at.dataframe[0].value[S.REWARD]) == [0.5, 0.9, math.inf]
    at.slider(key="reward").set_value((0.4, 0.6)).run()
    assert at.dataframe[0].value[S.REWARD].tolist() == [0.5]


def _steps_of_rewards(tmp_path, rewards_by_step: dict[int, list[float]]):
    import json

    from dump_files import make_sample

    lines = [json.dumps(make_sample(step, seed=i, reward=r))
             for step, rewards in rewards_by_step.items() for i, r in enumerate(rewards)]
    (tmp_path / "rollout_data_rank_0.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path


def test_a_reward_range_nobody_narrowed_filters_nothing_at_the_next_step(tmp_path):
    """The review's D1: the slider's whole range at step 2 (0.47-1.00) was kept at steps 1
    and 0, whose rewards start at 0, and hid their low rewards with no filter in the URL.
    The slider's bounds are now the run's rewards, the same at every step."""
    dump = _steps_of_rewards(tmp_path, {0: [0.0, 0.2, 0.5, 1.0], 1: [0.0, 0.3, 0.9],
                                        2: [0.47, 0.8, 1.0]})
    at = board(dump, page="responses")
    assert at.sidebar.select_slider(key="step").value == 2
    assert at.slider(key="reward").value == (0.0, 1.0)
    for step, count in ((1, 3), (0, 4), (2, 3)):
        at.sidebar.select_slider(key="step").set_value(step).run()
        assert not at.exception, at.exception
        assert len(at.dataframe[0].value) == count, step
        assert "reward" not in at.query_params


def test_a_narrowed_reward_range_is_one_filter_at_every_step_and_in_the_link(tmp_path):
    dump = _steps_of_rewards(tmp_path, {0: [0.0, 0.2, 0.5, 0.7, 2.0], 2: [0.47, 0.8, 1.0]})
    at = board(dump, page="responses")
    at.slider(key="reward").set_value((0.6, 1.0)).run()
    assert at.dataframe[0].value[S.REWARD].tolist() == [1.0, 0.8]
    at.sidebar.select_slider(key="step").set_value(0).run()
    assert at.slider(key="reward").value == (0.6, 1.0)
    assert at.query_params["reward"] == ["0.6", "1"]  # the link names the filter shown
    assert at.dataframe[0].value[S.REWARD].tolist() == [0.7]
