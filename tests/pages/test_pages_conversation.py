"""The conversation view of the Sample page, through the real board (AppTest)."""
import conversation_fixtures as C
import pytest
from apptest import board, errors, texts

KEY = "rollout_data_rank0.jsonl:1"


@pytest.fixture(scope="module")
def agent_dump(tmp_path_factory):
    return C.native_agent(tmp_path_factory.mktemp("agent"))


def _open(dump, **params):
    at = board(dump, page="sample", step="0", sample=KEY, **params)
    assert not at.exception and not errors(at), errors(at)
    return at


def _plain_texts(at) -> list[str]:
    return [t.value for t in at.text]


def test_turns_as_literal_text_with_tool_calls_and_collapsed_outputs(agent_dump):
    at = _open(agent_dump)
    shown = texts(at)
    assert "Conversation · 5 turns" in shown
    plain = _plain_texts(at)
    assert f"question 0 {C.HOSTILE}" in plain  # literal, with the <script> as written
    assert f"result 0 {C.HOSTILE}" in plain  # the tool output, inside its expander
    assert "let me run code" in plain and "I will run it." in plain
    codes = [c.value for c in at.code]
    assert '{\n  "code": "print(1) </script><script>alert(1)"\n}' in codes
    labels = [e.label for e in at.expander]
    assert any(label.startswith("tool output") for label in labels)
    assert any(label.startswith("thinking") for label in labels)
    assert all(not e.proto.expanded for e in at.expander)


def test_per_turn_metrics_over_trained_tokens_only(agent_dump):
    at = _open(agent_dump)
    table = at.dataframe[0].value
    assert table["role"].tolist() == ["assistant", "assistant"]
    assert table["tokens"].tolist() == [3, 3] and table["trained"].tolist() == [3, 3]
    assert table["log_ratio"].round(6).tolist() == [0.1, 0.1]
    assert table["entropy"].tolist() == [0.25, 0.25]
    assert any("3 tokens, 3 trained · log_ratio 0.1" in t for t in _plain_texts(at))


def test_show_toggles_hide_parts_and_live_in_the_url(agent_dump):
    at = _open(agent_dump, conv=["tool calls"])
    plain = _plain_texts(at)
    assert f"question 0 {C.HOSTILE}" not in plain and "I will run it." not in plain
    assert not [e for e in at.expander if e.label.startswith("tool output")]
    assert any("print(1)" in c.value for c in at.code)


def test_single_turn_samples_show_no_conversation(agent_dump):
    at = board(agent_dump, page="sample", step="1", sample="rollout_data_rank0.jsonl:9")
    assert not at.exception
    assert "Conversation" not in texts(at)


def test_responses_filters_by_tool_errors_tools_and_finish(agent_dump):
    at = board(agent_dump, page="responses", step="1")
    assert not at.exception
    table = at.dataframe[0].value
    assert len(table) == 5
    assert {"turns", "tool_calls", "tool_names", "tool_errors", "trained_share",
            "last_finish_reason"} <= set(table.columns)
    at = board(agent_dump, page="responses", step="1", terr="with tool errors")
    assert len(at.dataframe[0].value) == 1
    at = board(agent_dump, page="responses", step="1", tools="search")
    assert len(at.dataframe[0].value) == 1
    at = board(agent_dump, page="responses", step="1", finish="length")
    assert len(at.dataframe[0].value) == 1  # the single-turn sample's finish_reason
    assert at.radio(key="terr").value == "any"  # the URL holds the label: ?terr=with+tool+errors


def test_groups_keep_groups_with_an_answer_that_passes(agent_dump):
    at = board(agent_dump, page="groups", step="1")
    assert not at.exception
    assert "3 of 3 groups" in texts(at)
    at = board(agent_dump, page="groups", step="1", gterr="with tool errors")
    assert not at.exception and "1 of 3 groups" in texts(at)


def test_two_trajectories_side_by_side(agent_dump):
    at = _open(agent_dump, conv_b="rollout_data_rank0.jsonl:4")
    plain = _plain_texts(at)
    assert any(t.startswith("rollout_data_rank0.jsonl:1 · reward 0") for t in plain)
    assert any(t.startswith("rollout_data_rank0.jsonl:4 · reward 1") for t in plain)
    assert "Traceback (most recent call last): boom" in plain  # the other one's tool error
    assert sum("role" in d.value.columns for d in at.dataframe) == 2  # a turn table each
    at = board(agent_dump, page="sample", step="1", sample="rollout_data_rank0.jsonl:5",
               conv_b="rollout_data_rank0.jsonl:4")  # a key of another step: ignored
    assert not at.exception and at.selectbox(key="conv_b").value == "(none)"


def test_reasoning_alone_shows_think_blocks_without_the_messages(agent_dump):
    at = _open(agent_dump, conv=["reasoning"])
    plain = _plain_texts(at)
    assert "let me run code" in plain and "I will run it." not in plain
    assert f"question 0 {C.HOSTILE}" not in plain
