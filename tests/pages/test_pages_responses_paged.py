"""Responses and Prompts pages past 500 rows: a page at a time; left-out samples on request."""
from apptest import board, errors, goto, texts
from dump_files import make_sample, write_dump


def test_a_big_step_is_shown_a_page_at_a_time(tmp_path):
    samples = [make_sample(2, n=4, seed=i, reward=i / 1200) for i in range(1200)]
    root = write_dump(tmp_path / "run" / "rollout_data_rank_0.jsonl", samples).parent
    at = goto(board(root, sort="reward"), "responses")
    assert "1,200 of 1,200 samples · rows 1–500 (page 1 of 3)" in texts(at)
    assert len(at.dataframe[0].value) == 500
    assert at.dataframe[0].value["reward"].iloc[0] == max(s["reward"] for s in samples)
    at.number_input(key="rpage").set_value(3).run()
    assert "rows 1,001–1,200 (page 3 of 3)" in texts(at) and not errors(at)
    assert len(at.dataframe[0].value) == 200


def test_left_out_samples_join_the_table_when_shown(tmp_path):
    # rewards span the left-out one's, so the reward-range filter keeps it
    samples = [make_sample(1, seed=i, reward=float(i) / 2) for i in range(3)]
    samples.append(make_sample(1, seed=7, status="aborted", prompt="aborted one", reward=0.7))
    root = write_dump(tmp_path / "run" / "rollout_data_rank_0.jsonl", samples).parent
    at = goto(board(root), "responses")
    assert "3 of 3 samples" in texts(at) and "left out" not in at.dataframe[0].value
    at.toggle(key="left_out").set_value(True).run()
    table = at.dataframe[0].value
    assert "4 of 4 samples" in texts(at)
    assert table["left out"].tolist().count("status=aborted") == 1
    at.text_input(key="q").set_value("aborted one").run()
    assert "1 of 4 samples" in texts(at) and not errors(at)


def test_the_prompts_table_is_shown_a_page_at_a_time(tmp_path):
    """20,000 prompts are not sent to the browser at once: 500 a page, sorted over all of
    them, and a row of a later page opens that prompt's history."""
    samples = [make_sample(step, n=4, seed=i, prompt=f"question {i}", reward=float(i % 3 == 0))
               for step in (1, 2) for i in range(620)]
    root = write_dump(tmp_path / "run" / "rollout_data_rank_0.jsonl", samples).parent
    at = goto(board(root), "prompts")
    assert not errors(at) and len(at.dataframe(key="t_prompts").value) == 500
    assert "620 of 620 prompts · rows 1–500 (page 1 of 2)" in texts(at)
    at.number_input(key="ppage").set_value(2).run()
    shown = at.dataframe(key="t_prompts").value
    assert len(shown) == 120 and not errors(at)
    assert "rows 501–620 (page 2 of 2)" in texts(at)
    at.session_state["t_prompts"] = {"selection": {"rows": [5], "columns": [], "cells": []}}
    at = at.run()
    assert at.text_input(key="prompt").value == shown["id"].iloc[5]
    assert at.dataframe(key="t_history").value["step"].tolist() == [1, 2]
