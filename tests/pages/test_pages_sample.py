"""Sample page through the real board."""
import orjson
from apptest import board, text_blocks, texts
from dump_files import make_sample, write_dump

from loaders import schema as S
from pages.frame.display_options import widget_key
from pages.frame.view import DisplayOptions

PADDED = "rollout_data_rank_0.jsonl:13"
HTML = "rollout_data_rank_0.jsonl:14"


def _sample(board_dump, key, step="2"):
    at = board(board_dump, page="sample", step=step, sample=key)
    assert not at.exception, at.exception
    return at


def test_sample_from_url_shows_texts_side_by_side(board_dump):
    at = _sample(board_dump, "rollout_data_rank_1.jsonl:6", step="1")
    expected = make_sample(1, n=6, seed=11, prompt="Question 1")
    codes = text_blocks(at)
    assert expected["prompt"] in codes and expected["response"] in codes
    assert "ref answer" in codes
    assert at.selectbox(key="sample").value == "rollout_data_rank_1.jsonl:6"
    metrics = {m.label: m.value for m in at.metric}  # the sample's own, not the step's mean
    assert metrics["response tokens"] == "6" and metrics["reference reward"] == "0.25"
    assert at.query_params["sample"] in ("rollout_data_rank_1.jsonl:6",
                                         ["rollout_data_rank_1.jsonl:6"])


def test_padded_sample_warns_and_drops_pad_tokens(board_dump):
    at = _sample(board_dump, PADDED)
    assert any("Length mismatch" in w.value for w in at.warning)
    assert "4 tokens (pad tokens dropped)" in texts(at)
    html = "".join(h.proto.body for h in at.get("html"))
    assert "&lt;PAD&gt;" not in html and html.count('class="tok"') == 4


def test_html_in_a_response_stays_text(board_dump):
    at = _sample(board_dump, HTML)
    assert '<img src=x onerror="alert(1)">' in text_blocks(at)
    html = "".join(h.proto.body for h in at.get("html"))
    assert "<img" not in html and "&lt;img·src=x" in html


def test_token_metrics_drive_the_window_table(board_dump):
    at = _sample(board_dump, "rollout_data_rank_0.jsonl:9")
    metrics = at.multiselect(key="tm")
    assert S.LOG_RATIO in metrics.value
    at = metrics.set_value([S.VALUE, S.PROB]).run()
    at = at.toggle(key="w_table").set_value(True).run()
    table = at.dataframe[-1].value
    assert list(table.columns) == ["position", "token", S.VALUE, S.PROB]
    assert table["token"].tolist()[:2] == ["·t0", "·t1"]
    at.selectbox(key="colour").set_value(S.K3).run()
    assert not at.exception


def test_choosing_another_sample_shows_it_and_its_link_reopens_it(board_dump):
    at = _sample(board_dump, "rollout_data_rank_0.jsonl:9")
    before = text_blocks(at)
    at.selectbox(key="sample").set_value("rollout_data_rank_1.jsonl:10").run()
    assert text_blocks(at) != before
    again = _sample(board_dump, "rollout_data_rank_1.jsonl:10")  # the URL the widget writes
    assert again.selectbox(key="sample").value == "rollout_data_rank_1.jsonl:10"
    assert text_blocks(again) == text_blocks(at)


def test_unknown_sample_in_url_falls_back_to_the_first(board_dump):
    at = _sample(board_dump, "nope.jsonl:1")
    assert at.selectbox(key="sample").value == "rollout_data_rank_0.jsonl:9"


def test_pad_option_changes_what_is_dropped(board_dump):
    at = board(board_dump, page="sample", step="2", sample=PADDED, opts="true")
    at.sidebar.text_input(key=widget_key("pad")).input("").run()
    assert "4 tokens (pad tokens dropped)" in texts(at)
    assert at.query_params["pad"] == ""  # the option's URL parameter, for a copied link
    at.sidebar.text_input(key=widget_key("pad")).input(DisplayOptions().pad_token).run()
    assert "pad" not in at.query_params  # the default again: no parameter


def test_display_options_are_drawn_only_when_opened_and_read_from_the_url(board_dump):
    closed = board(board_dump, page="sample", step="2", sample=PADDED, pad="", kl="k1")
    assert not closed.exception, closed.exception
    assert not [w for w in closed.sidebar.text_input if w.label == "Pad token to strip"]
    assert not [w for w in closed.sidebar.selectbox if w.label == "KL estimator"]
    assert "4 tokens (pad tokens dropped)" in texts(closed)  # the link's pad: none
    assert any(m.label == "KL k1 (token mean)" for m in closed.metric)
    opened = board(board_dump, page="sample", step="2", sample=PADDED, pad="", opts="true")
    assert opened.sidebar.text_input(key=widget_key("pad")).value == ""
    assert opened.sidebar.selectbox(key=widget_key("kl")).value == "k3"


def test_a_jump_that_drops_the_options_from_the_url_gets_them_back(board_dump):
    at = board(board_dump, page="sample", step="2", sample=PADDED, kl="k1", pad="")
    at.query_params.clear()  # what st.switch_page(query_params={}) leaves (state.go)
    at.query_params["step"] = "2"
    at.run()
    assert (at.query_params["kl"], at.query_params["pad"]) == ("k1", "")
    assert any(m.label == "KL k1 (token mean)" for m in at.metric)


def test_a_missing_reference_response_is_not_shown_as_an_empty_one(tmp_path):
    # no ref_response key (most trainers log none) against an empty one
    missing = make_sample(1, seed=0)
    del missing["ref_response"]
    samples = [missing, make_sample(1, seed=1, ref_response="")]
    root = write_dump(tmp_path / "run" / "rollout_data_rank_0.jsonl", samples).parent
    opened = [text_blocks(_sample(root, f"rollout_data_rank_0.jsonl:{line}", step="1"))
              for line in (1, 2)]
    assert "(the dump has no reference response for this sample)" in opened[0]
    assert "(empty)" not in opened[0]
    assert "(empty)" in opened[1]


def test_a_sample_link_without_its_step_opens_the_sample_at_its_step(board_dump):
    """The review's D2: the board leaves the step out of a link made at the latest step, and
    such a link opened another sample (of the latest step) with no word once a later step
    was written."""
    at = board(board_dump, page="sample", sample="rollout_data_rank_1.jsonl:6")
    assert not at.exception, at.exception
    assert "Sample · step 1" in texts(at)
    assert at.selectbox(key="sample").value == "rollout_data_rank_1.jsonl:6"
    assert at.sidebar.select_slider(key="step").value == 1
    at.sidebar.select_slider(key="step").set_value(2).run()  # a step changed here: its first
    assert "Sample · step 2" in texts(at)
    assert at.selectbox(key="sample").value == at.selectbox(key="sample").options[0]


def test_a_sample_key_the_run_does_not_have_is_said(board_dump):
    at = board(board_dump, page="sample", sample="rollout_data_rank_9.jsonl:1")
    assert not at.exception, at.exception
    assert "This run has no sample rollout_data_rank_9.jsonl:1" in texts(at)
    assert at.selectbox(key="sample").value == at.selectbox(key="sample").options[0]


def test_a_nan_reward_reads_nan_and_a_missing_one_a_dash(tmp_path):
    line = make_sample(1, seed=1, reward=1234.5) | {"ref_reward": None}
    path = write_dump(tmp_path / "run" / "rollout_data_rank_0.jsonl", [make_sample(1)],
                      extra=orjson.dumps(line).replace(b"1234.5", b"NaN") + b"\n")
    at = board(path.parent, page="sample", sample="rollout_data_rank_0.jsonl:2")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["reward"] == "NaN" and metrics["reference reward"] == "—"
