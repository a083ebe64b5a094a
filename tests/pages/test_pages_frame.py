"""The frame through the real entry script: dir box, run picker, loading summary, URL."""
import html

import pytest
from apptest import board, current_page, errors, goto, texts
from dump_files import make_sample, write_dump
from format_fixtures import nemo, verl


def test_opens_dump_and_shows_summary(dump_dir):
    at = board(dump_dir)
    assert not at.exception, at.exception
    assert "24 samples · 3 steps · 0 bad lines" in texts(at)
    assert current_page(at) == "rewards"
    assert "page" not in at.query_params  # every page is a route of its own


def test_bad_lines_listed_with_file_and_line(dump_dir):
    with open(dump_dir / "rollout_data_rank_1.jsonl", "ab") as handle:
        handle.write(b"{not json\n")
    at = board(dump_dir)
    assert "1 bad lines" in texts(at) and "1 × invalid JSON" in texts(at)
    listed = goto(at, "problems").dataframe[1].value.iloc[0]
    assert (listed["file"], listed["line"]) == ("rollout_data_rank_1.jsonl", 13)
    assert listed["reason"].startswith("invalid JSON") and listed["sample"] == "dropped"


def test_missing_dir_says_so(tmp_path):
    at = board(tmp_path / "nope")
    assert any("No such directory" in e for e in errors(at))
    assert not at.exception


def test_empty_dir_says_so(tmp_path):
    at = board(tmp_path)
    assert any("no .jsonl dump files" in e for e in errors(at))


def test_only_bad_lines_is_a_warning_not_a_crash(tmp_path):
    (tmp_path / "r.jsonl").write_bytes(b"garbage\n{\n")
    at = board(tmp_path)
    assert not at.exception
    assert "no usable samples" in texts(at)


def test_root_refuses_dirs_outside(tmp_path, monkeypatch, dump_dir):
    inside = tmp_path / "allowed"
    write_dump(inside / "rollout_data_rank_0.jsonl", [make_sample(0)])
    (inside / "escape").symlink_to(dump_dir)
    monkeypatch.setenv("RL_BOARD_ROOT", str(inside))
    assert not errors(board(inside))
    for target in (dump_dir, inside / ".." / "run", inside / "escape"):
        assert any("outside the allowed root" in e for e in errors(board(target)))


def test_run_picker_lists_sub_runs(tmp_path):
    for name in ("exp_a", "exp_b"):
        write_dump(tmp_path / name / "rollout_data_rank_0.jsonl",
                   [make_sample(s, seed=len(name)) for s in range(2)])
    at = board(tmp_path, run="exp_b")
    picker = at.sidebar.selectbox(key="run")
    assert picker.options == ["(everything under the dir)", "exp_a", "exp_b"]
    assert picker.value == "exp_b"
    assert "2 samples · 2 steps" in texts(at)
    assert "shown as one run" not in texts(at)
    at = picker.set_value(".").run()
    assert "4 samples · 2 steps" in texts(at)
    # the review's S9: an ablation's folder merged step by step, said where it is chosen
    assert "2 sub-runs shown as one run (their samples merged step by step)" in texts(at)


def test_query_params_restore_page_and_step(dump_dir):
    at = board(dump_dir, page="responses", step="1")
    assert current_page(at) == "responses"
    assert at.sidebar.select_slider(key="step").value == 1
    at.sidebar.select_slider(key="step").set_value(2).run()
    assert [h.value for h in at.header] == ["Responses · step 2"]


def test_old_page_links_redirect_and_a_changed_page_param_wins(dump_dir):
    """`?page=` from earlier versions opens that page's route, also mid-session."""
    at = board(dump_dir, page="responses")
    assert current_page(at) == "responses"
    assert "page" not in at.query_params
    at.query_params["page"] = "rewards"
    at.run()
    assert current_page(at) == "rewards"
    assert [h.value for h in at.header][0] == "Rewards"


def test_unknown_page_param_stays_on_the_current_page(dump_dir):
    at = board(dump_dir, page="nope")
    assert not errors(at)
    assert current_page(at) == "rewards"
    assert "page" not in at.query_params


@pytest.mark.parametrize("bad", ["a\x00b", "x" * 5000, "![x](http://198.51.100.7/x.png)"])
def test_bad_dir_or_metrics_in_url_is_a_one_line_message(bad, dump_dir):
    for at in (board(bad), board(dump_dir, metrics=bad)):
        assert not at.exception
        raw = [e.value for e in list(at.error) + list(at.sidebar.error)]
        assert raw and all("\n" not in e and len(html.unescape(e)) < 1200 for e in raw)
        assert all("Traceback" not in e and "![x](" not in e for e in raw)  # no Markdown


def test_sub_runs_of_different_trainers_open_one_at_a_time(tmp_path):
    verl(tmp_path / "a_verl")
    nemo(tmp_path / "b_nemo")
    write_dump(tmp_path / "c_native" / "rollout_data_rank_0.jsonl", [make_sample(0)])
    at = board(tmp_path)
    picker = at.sidebar.selectbox(key="run")
    assert picker.value == picker.options[1] != "(everything under the dir)"
    assert "sub-runs in different formats: showing the first" in texts(at)
    at = picker.set_value(".").run()  # all of them, when asked
    assert "showing the first" not in texts(at) and not errors(at)


def test_runs_in_one_format_still_open_together(tmp_path):
    for name in ("exp_a", "exp_b"):
        write_dump(tmp_path / name / "rollout_data_rank_0.jsonl", [make_sample(0)])
    assert board(tmp_path).sidebar.selectbox(key="run").value == "."


def test_an_unknown_run_in_the_url_is_an_error(tmp_path):
    for name in ("exp_a", "exp_b"):
        write_dump(tmp_path / name / "rollout_data_rank_0.jsonl", [make_sample(0)])
    at = board(tmp_path, run="exp_zzz")
    assert any("No sub-run 'exp_zzz'" in e for e in errors(at))
    assert "samples ·" not in texts(at)  # nothing loaded in its place


@pytest.mark.parametrize("asked", ["abc", "-1", "7", "1e99"])
def test_a_links_step_the_run_lacks_is_said_and_the_newest_shown(dump_dir, asked):
    at = board(dump_dir, step=asked)
    shown = html.unescape("\n".join(str(c.value) for c in at.sidebar.caption))
    assert f"The link's step {asked} is not one of this run's steps" in shown
    assert at.select_slider(key="step").value == 2  # the newest
    fine = board(dump_dir, step="1")
    assert "is not one of this run's steps" not in texts(fine) and not fine.exception
