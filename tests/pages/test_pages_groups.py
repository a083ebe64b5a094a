"""Groups and Prompts pages through the real app (AppTest via the entry script)."""
import html
import re

import pytest
from apptest import board, current_page, errors, goto, text_blocks, texts
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.serve.groups import GroupOptions
from samples.generate_dump import write_dump as generate


@pytest.fixture(scope="module")
def grouped(tmp_path_factory):
    root = tmp_path_factory.mktemp("grouped")
    generate(root, steps=3, ranks=2, samples_per_rank=32, max_tokens=64, seed=5, group_size=8)
    return root


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_groups_page_shows_the_steps_mix_as_the_loaders_count_it(grouped):
    at = goto(board(grouped, step="2"), "groups")
    assert current_page(at) == "groups" and not errors(at)
    expected = open_run(grouped).trained().groups().step(2, GroupOptions())
    assert _metric(at, "groups") == str(expected.mix["groups"]) == "8"
    assert _metric(at, "no signal") == str(expected.mix[S.NO_SIGNAL])
    assert _metric(at, "mixed") == str(expected.mix["mixed"])
    shown = texts(at)
    assert "groups by: uid (64)" in shown and "advantage: derived, GRPO" in shown
    assert not at.get("vega_lite_chart")  # the mix over the run is drawn once opened
    opened = board(grouped, step="2", page="groups", gmix="true")
    mix = [c.proto.spec for c in opened.get("vega_lite_chart")]
    assert len(mix) == 1 and "Group mix per step" in mix[0] and "zero variance" in mix[0]
    assert not opened.get("plotly_chart")


def test_flag_filter_and_regex_narrow_the_table(grouped):
    at = goto(board(grouped, step="2"), "groups")
    expected = open_run(grouped).trained().groups().step(2, GroupOptions()).mix
    at.multiselect(key="gflags").set_value([S.ZERO_VARIANCE]).run()
    assert f"{expected[S.ZERO_VARIANCE]} of 8 groups" in texts(at)
    at.text_input(key="gq").set_value("(").run()
    assert any("invalid regex" in e for e in errors(at))


def test_one_group_opened_shows_every_answer_and_a_diff(grouped):
    at = goto(board(grouped, step="1"), "groups")
    first = open_run(grouped).trained().groups().step(1, GroupOptions()).table.index[0]
    at = at.text_input(key="gid").set_value(str(first)).run()
    assert not errors(at)
    captions = [html.unescape(c.value) for c in at.caption]
    cards = [c for c in captions if re.match(r"#\d+ · reward", c)]
    assert len(cards) == 8
    rewards = [float(re.search(r"reward ([-\d.e]+)", c).group(1)) for c in cards]
    assert rewards == sorted(rewards, reverse=True)
    assert any(c.startswith("Word diff #1 → #8") for c in captions)
    members = open_run(grouped).trained().groups().step(1, GroupOptions()).table
    assert members.loc[first, S.PROMPT][:30] in text_blocks(at)[0]  # the prompt, literal
    assert len(text_blocks(at)) == 1 + 8  # the prompt and one card per answer
    at.selectbox(key="gfull").set_value(3).run()
    assert not errors(at)
    at.text_input(key="gid").set_value("123").run()
    assert "No group 123 at this step" in texts(at)


def test_group_advantage_mode_changes_with_the_display_option(grouped):
    at = goto(board(grouped, step="1", adv="dr_grpo"), "groups")
    assert "advantage: derived, Dr. GRPO: r − mean" in texts(at)


def _prompt_counts(at) -> dict[str, str]:
    (block,) = [str(h.proto.body) for h in at.get("html") if "rlb-counts" in h.proto.body]
    return {html.unescape(name): count for name, count in re.findall(
        r'<div style="font-size:0.875rem">([^<]*)</div><div[^>]*>([^<]*)</div>', block)}


def test_prompts_page_and_one_prompts_history(grouped):
    at = goto(board(grouped), "prompts")
    assert current_page(at) == "prompts" and not errors(at)
    _, table = open_run(grouped).trained().groups().history()
    counts = _prompt_counts(at)  # one HTML row of figures, the board's own flags
    assert counts["never solved"] == f'{int(table["never solved"].sum()):,}'
    assert list(counts) == [*S.PROMPT_FLAGS, S.SEEN_ONCE] and not at.metric
    prompt = table.index[table[S.STEPS_SEEN] >= 2][0]
    at.text_input(key="prompt").set_value(str(prompt)).run()
    assert not errors(at) and at.dataframe[-1].value[S.STEP].tolist() == sorted(
        open_run(grouped).trained().groups().prompt(prompt)[S.STEP])
    # its history is a Vega-Lite chart: opening a prompt loads no Plotly script
    charts = [c.proto.spec for c in at.get("vega_lite_chart")]
    assert len(charts) == 1 and "each step it appears" in charts[0]
    assert not at.get("plotly_chart")
    at.text_input(key="prompt").set_value("12x").run()
    assert any("not a prompt id" in e for e in errors(at))


def test_left_out_samples_are_counted_and_shown_on_request(tmp_path):
    samples = [make_sample(1, seed=i, prompt="q", reward=float(i % 2)) for i in range(4)]
    samples += [make_sample(1, seed=9, prompt="q", reward=5.0, status="aborted"),
                make_sample(1, seed=8, prompt="<b>gone</b>", reward=5.0, filtered=True)]
    root = write_dump(tmp_path / "run" / "rollout_data_rank_0.jsonl", samples).parent
    at = goto(board(root), "groups")
    shown = texts(at)
    assert "2 samples left out of training: status=aborted 1, filtered 1" in shown
    assert "2 left-out samples at this step (hidden); 1 groups left out entirely" in shown
    assert _metric(at, "groups") == "1"
    at.toggle(key="left_out").set_value(True).run()
    assert _metric(at, "groups") == "2" and "shown, and in these statistics" in texts(at)


def _select(at, key: str, row: int):
    at.session_state[key] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    return at.run()


def test_table_rows_open_a_group_an_answer_and_a_prompts_group(grouped):
    at = goto(board(grouped, step="2"), "groups")
    shown = at.dataframe(key="t_groups").value
    at = _select(at, "t_groups", 1)
    assert at.text_input(key="gid").value == shown["id"].iloc[1]
    answers = at.dataframe(key="t_answers").value
    at = _select(at, "t_answers", 2)
    assert current_page(at) == "sample" and not errors(at)
    assert at.session_state["sample"] == answers[S.KEY].iloc[2]
    at = goto(at, "prompts")
    prompts = at.dataframe(key="t_prompts").value
    at = _select(at, "t_prompts", 0)
    assert at.text_input(key="prompt").value == prompts["id"].iloc[0]
    history = at.dataframe(key="t_history").value
    at = _select(at, "t_history", len(history) - 1)
    assert current_page(at) == "groups" and not errors(at)
    assert at.sidebar.select_slider(key="step").value == history[S.STEP].iloc[-1]
    assert at.text_input(key="gid").value == history[S.GROUP_ID].iloc[-1]
    assert len(at.dataframe(key="t_answers").value) == history[S.GROUP_SIZE].iloc[-1]


def test_a_dump_with_no_group_id_says_its_groups_are_rebuilt_from_the_prompt(tmp_path):
    """verl's own lines hold no uid: the page says so rather than naming a field."""
    write_dump(tmp_path / "rollout_data_rank_0.jsonl",
               [make_sample(1, seed=i % 2) for i in range(4)])
    at = goto(board(tmp_path, step="1"), "groups")
    assert not errors(at)
    assert ("groups by: the prompt text (the dump holds no group id: groups rebuilt from it) "
            "(4)") in texts(at)


def test_a_group_of_under_two_rewards_is_counted_as_no_signal_and_shows_no_advantage(tmp_path):
    # a group of one, and a group of two whose second reward is NaN: the same case
    samples = [make_sample(1, seed=0, prompt="alone", reward=1.0),
               make_sample(1, seed=1, prompt="half", reward=0.2),
               make_sample(1, seed=2, prompt="half", reward=float("nan")),
               *(make_sample(1, seed=3 + i, prompt="mixed", reward=float(i % 2))
                 for i in range(4))]
    root = write_dump(tmp_path / "run" / "rollout_data_rank_0.jsonl", samples).parent
    at = goto(board(root, step="1"), "groups")
    assert not errors(at) and _metric(at, "no signal") == "2"
    assert "0 zero variance · 2 under two rewards" in texts(at)
    shown = at.dataframe(key="t_groups").value.set_index(S.PROMPT)
    assert shown.loc[["alone", "half"], S.stat(S.REWARD, "std")].isna().all()  # not 0
    assert shown.loc["alone", "flags"].startswith("under two rewards")
    at.multiselect(key="gflags").set_value([S.NO_SIGNAL]).run()
    assert "2 of 3 groups" in texts(at)
    at = at.text_input(key="gid").set_value(shown.loc["alone", "id"]).run()
    captions = [html.unescape(c.value) for c in at.caption]
    assert any(c.startswith("1 answer, best reward first") and "no relative advantage" in c
               for c in captions)
    assert any(c.startswith("#1 · reward 1 · adv —") for c in captions)


def test_the_groups_search_reads_whole_prompts_and_the_prompts_search_says_its_scope(tmp_path):
    """The index keeps a prompt's last 400 characters; a word at the start of a long prompt
    is found by the Groups search (as by Responses'), and Prompts says what it searches."""
    long = [make_sample(1, seed=s, prompt=f"{word} " + "filler " * 120 + f"question {s}?",
                        uid=f"g{s % 2}")
            for s, word in enumerate(["OPENINGWORD", "OTHERWORD", "OPENINGWORD", "OTHERWORD"])]
    path = write_dump(tmp_path / "run" / "rollout_data_rank_0.jsonl", long)
    at = goto(board(path.parent), "groups")
    at.text_input(key="gq").set_value("OPENINGWORD").run()
    assert not errors(at) and "1 of 2 groups" in texts(at)
    at = goto(at, "prompts")
    at.text_input(key="pq").set_value("OPENINGWORD").run()
    assert "0 of 4 prompts" in texts(at)  # the prompt's end only, as its help says
    assert "last 400 characters" in at.text_input(key="pq").help
    at.text_input(key="pq").set_value("question 2").run()
    assert "1 of 4 prompts" in texts(at)
