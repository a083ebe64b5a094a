"""Sample page header and previous / next through the Responses order, and the Responses
table's sort arrow, through the real board."""
import json

import format_fixtures as F
from apptest import board, goto, texts

from loaders import schema as S
from pages.routes.responses import table_key


def _table_order(at) -> list[str]:
    return at.dataframe[0].value[S.KEY].tolist()


def _column_labels(at) -> dict:
    return json.loads(at.dataframe[0].proto.columns)


def test_next_and_previous_follow_the_responses_sort(board_dump):
    at = board(board_dump, page="responses", step="2")
    at.selectbox(key="sort").set_value("length (tokens)").run()
    at.toggle(key="desc").set_value(False).run()
    order = _table_order(at)
    assert len(order) == 10 and order != sorted(order)  # not file:line order
    goto(at, "sample")
    at.selectbox(key="sample").set_value(order[0]).run()
    assert at.button(key="s_k").disabled and not at.button(key="s_j").disabled
    assert ("sample 1 of 10, in the Responses order: sort by length (tokens), ascending"
            in texts(at))
    at.button(key="s_j").click().run()
    assert at.selectbox(key="sample").value == order[1]
    at.button(key="s_j").click().run()
    assert at.selectbox(key="sample").value == order[2]
    assert "sample 3 of 10" in texts(at)
    at.button(key="s_k").click().run()
    assert at.selectbox(key="sample").value == order[1]
    assert not at.exception


def test_the_order_keeps_the_responses_filters(board_dump):
    at = board(board_dump, page="responses", step="2")
    low, high = at.slider(key="reward").value
    at.slider(key="reward").set_value((0.5, high)).run()
    order = _table_order(at)
    assert 1 < len(order) < 10
    goto(at, "sample")
    at.selectbox(key="sample").set_value(order[-1]).run()
    assert at.button(key="s_j").disabled  # the last of the filtered rows
    assert (f"sample {len(order)} of {len(order)}, in the Responses order: sort by reward, "
            f"descending; {len(order)} of 10 samples after its filters") in texts(at)
    at.button(key="s_k").click().run()
    assert at.selectbox(key="sample").value == order[-2]


def test_without_the_responses_page_next_is_the_file_order(board_dump):
    at = board(board_dump, page="sample", step="2")
    keys = at.selectbox(key="sample").options
    assert at.selectbox(key="sample").value == keys[0]
    assert "sample 1 of 10, in file:line order" in texts(at)
    at.button(key="s_j").click().run()
    assert at.selectbox(key="sample").value == keys[1]
    assert at.query_params["sample"] in (keys[1], [keys[1]])  # the link names it


def test_header_shows_the_samples_own_numbers_as_the_table_does(board_dump):
    at = board(board_dump, page="responses", step="2")
    at.selectbox(key="sort").set_value("length (tokens)").run()
    row = at.dataframe[0].value.iloc[0]  # the longest response of the step
    goto(at, "sample")
    at.selectbox(key="sample").set_value(row[S.KEY]).run()
    metrics = {m.label: m for m in at.metric}
    assert metrics["response tokens"].value == f"{row[S.RESPONSE_LEN]:,}"
    assert metrics["reward"].value == f"{row[S.REWARD]:.4g}"
    assert metrics["reward gap (RL − ref)"].value == f"{row[S.REWARD_GAP]:+.4g}"
    assert "vs step mean" in metrics["response tokens"].delta


def test_a_dump_without_reference_or_tokens_shows_dashes(tmp_path):
    at = board(F.verl(tmp_path / "verl"), page="sample")
    assert not at.exception
    metrics = {m.label: m for m in at.metric}
    for label in ("reference reward", "reward gap (RL − ref)", "response tokens",
                  "reference chars", "KL k3 (token mean)"):
        assert metrics[label].value == "—" and not metrics[label].delta, label
    assert "nan" not in " ".join(m.value for m in at.metric)
    assert "vs step mean" in metrics["reward"].delta


def test_the_sort_arrow_follows_the_descending_toggle(board_dump):
    at = board(board_dump, page="responses", step="2")
    assert _column_labels(at)[S.REWARD]["label"] == "reward ↓"
    assert at.dataframe[0].proto.id.endswith(table_key(S.REWARD, True))
    at.toggle(key="desc").set_value(False).run()
    assert _column_labels(at)[S.REWARD]["label"] == "reward ↑"
    assert at.dataframe[0].proto.id.endswith(table_key(S.REWARD, False))  # a fresh grid
    at.selectbox(key="sort").set_value("KL k3 mean").run()
    labels = _column_labels(at)
    assert labels[S.kl_mean(S.K3)]["label"] == f"{S.kl_mean(S.K3)} ↑"
    assert labels[S.kl_mean(S.K3)]["pinned"] is True  # on screen left of the texts
    assert "label" not in labels.get(S.REWARD, {})
    assert "re-sorts only the rows of this page" in texts(at)
