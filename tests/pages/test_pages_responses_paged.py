"""Responses page at a big step: 500 rows at a time, and left-out samples on request."""
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
