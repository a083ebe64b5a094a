"""Every trainer format through every page of the real board."""
import html

import agent_format_fixtures as A
import format_fixtures as F
import pytest
import trace_dumps as D
from apptest import board, texts

from pages.frame.display_options import widget_key
from pages.frame.sidebar import WHOLE_DIR
from pages.routes import BY_PATH as PAGES

WRITERS = {**F.ALL, "roll_agentic": F.roll_agentic, "tinker": D.tinker_run,
           "open_instruct": D.open_instruct_run}


@pytest.fixture(scope="module", params=sorted(WRITERS))
def format_dump(request, tmp_path_factory):
    return WRITERS[request.param](tmp_path_factory.mktemp(request.param) / "dump"), request.param


@pytest.mark.parametrize("page", list(PAGES))
def test_every_page_renders(format_dump, page):
    root, _ = format_dump
    at = board(root, page=page)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]


def test_the_sidebar_says_once_what_the_run_holds_twice(tmp_path):
    root = tmp_path / "run"
    A.prime_rollouts(root)
    F.prime(root)
    # the board opens one sub-run of a mixed dir; everything under it holds both
    at = board(root, page="rewards")
    assert "no key joins" not in texts(at)
    at = at.sidebar.selectbox(key="run").set_value(WHOLE_DIR).run()
    said = [c.value for c in at.sidebar.caption if "no key joins an export" in c.value]
    assert len(said) == 1


def test_a_dump_without_rewards_says_so(tmp_path):
    """prime-rl's current token exports hold no reward: no empty curve is drawn."""
    at = board(F.prime(tmp_path / "prime"), page="rewards")
    assert "No reward: this dump holds no reward per sample." in texts(at)
    assert "c_reward" not in [chart.key for chart in at.get("vega_lite_chart")]


def test_token_less_formats_say_so(tmp_path):
    root = F.verl(tmp_path / "verl")
    at = board(root, page="sample")
    assert "This sample has no token-level data." in texts(at)
    at = board(root, page="rewards", chart="KL")
    assert "No KL: this dump has no logprobs" in texts(at)
    assert "c_kl" not in [chart.key for chart in at.get("vega_lite_chart")]  # no empty chart


def test_validation_is_a_separate_view(tmp_path):
    root = F.native_forks(tmp_path / "native")
    at = board(root, page="responses", step="1")
    assert at.sidebar.radio(key="split").value == "train"
    assert len(at.dataframe[0].value) == 3
    at.sidebar.radio(key="split").set_value("validation").run()
    assert at.dataframe[0].value["prompt"].tolist() == ["vq"]
    fresh = board(root, page="responses", step="1", split="validation")  # a copied link
    assert fresh.dataframe[0].value["prompt"].tolist() == ["vq"]


def test_new_token_metrics_are_selectable_and_sortable(tmp_path):
    root = F.prime(tmp_path / "prime")
    at = board(root, page="sample")
    options = at.multiselect(key="tm").options
    for metric in ("entropy", "advantages", "mismatch_kl", "importance_ratio"):
        assert metric in options
    at = board(root, page="responses")
    at.selectbox(key="sort").set_value("(any column)").run()
    at.selectbox(key="col").set_value("mismatch_kl_mean").run()
    assert "mismatch_kl_mean" in at.dataframe[0].value.columns


def test_token_ids_without_transformers_warn_and_still_show(tmp_path, monkeypatch):
    import sys

    from loaders.serve import tokenizer

    tokenizer._load.cache_clear()
    monkeypatch.setitem(sys.modules, "transformers", None)
    root = F.prime(tmp_path / "prime")
    at = board(root, page="sample", opts="true")  # the display options' expander open
    at.sidebar.text_input(key=widget_key("tokenizer")).input(str(tmp_path)).run()
    assert any("optional 'transformers' package" in html.unescape(w.value) for w in at.warning)
    assert "3 tokens" in texts(at)
