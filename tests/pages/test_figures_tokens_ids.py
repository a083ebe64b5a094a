"""Id-only formats (NeMo-RL): token ids set apart and named as ids, the prompt as text (not a
JSON list), and the Sample page's token strips on from the start."""
import json

import numpy as np
from apptest import board, texts
from dump_files import write_dump
from format_fixtures import nemo

from loaders import open_run
from loaders import schema as S
from pages.figures import token_colours as C
from pages.figures.token_text import IDS, ids_only, token_style

KEY = "train_data_step2.jsonl:1"


def test_ids_only_judges_the_token_texts():
    assert ids_only(["70930", "0", "46470"])
    assert not ids_only(["70930", " the"]) and not ids_only([]) and not ids_only(["²"])


def test_nemo_prompt_is_its_messages_as_lines(tmp_path):
    root = nemo(tmp_path / "nemo") / "exp_001"
    run = open_run(root, use_cache=False)
    prompt = run.sample(KEY).texts[S.PROMPT]
    assert prompt == "<|system|>be brief<|user|>what is 2+2?"
    two = [{"content": [["system: be brief", "user: 2+2?", "4", "Environment: correct"]],
            "rewards": [1.0],
            "token_ids": [[5, 6, 7]], "token_loss_mask": [[0, 0, 1]],
            "prev_logprobs": [[0.0, 0.0, -0.5]], "generation_logprobs": [[0.0, 0.0, -0.4]]}]
    one = open_run(write_dump(tmp_path / "two" / "train_data_step1.jsonl", two).parent,
                   use_cache=False)
    assert one.sample("train_data_step1.jsonl:1").texts[S.PROMPT] == \
        "system: be brief\nuser: 2+2?"


def test_nemo_without_content_shows_prompt_ids_space_separated(tmp_path):
    record = {"rewards": [1.0], "token_ids": [[11, 22, 33, 44]],
              "token_loss_mask": [[0, 0, 1, 1]], "prev_logprobs": [[0.0, 0.0, -0.5, -0.1]],
              "generation_logprobs": [[0.0, 0.0, -0.4, -0.1]]}
    path = write_dump(tmp_path / "ids" / "train_data_step1.jsonl", [record])
    sample = open_run(path.parent, use_cache=False).sample("train_data_step1.jsonl:1")
    assert sample.texts[S.PROMPT] == "11 22"
    assert sample.tokens[S.TOKEN].tolist() == ["33", "44"]
    json.dumps(sample.texts[S.PROMPT])  # plain text


def test_sample_page_of_an_id_only_dump(tmp_path):
    root = nemo(tmp_path / "nemo") / "exp_001"
    at = board(root, page="sample", step="2", sample=KEY)
    assert not at.exception, at.exception
    shown = texts(at)
    assert "token ids (no tokenizer set: set one in the sidebar to decode)" in shown
    assert '["<|system|>' not in shown
    assert at.multiselect(key="tm").value == [S.LOGPROB, "mismatch_kl"]  # never empty
    assert at.selectbox(key="colour").value == S.LOGPROB
    body = "".join(h.proto.body for h in at.get("html"))
    assert body.count('class="tok"') == 4 and body.count("margin-right:0.6ch") == 4
    assert "hot = unlikely token" in body and "fixed scale" in body
    at.segmented_control(key="cscale").set_value(C.SAMPLE).run()
    body = "".join(h.proto.body for h in at.get("html"))
    assert "this sample&#x27;s 99th percentile" in body
    linked = board(root, page="sample", step="2", sample=KEY, cscale=C.SAMPLE)  # a shared link
    assert linked.segmented_control(key="cscale").value == C.SAMPLE


def test_jump_table_context_sets_ids_apart(tmp_path):
    from pages.figures import token_top
    frame = open_run(nemo(tmp_path / "nemo") / "exp_001", use_cache=False).sample(KEY).tokens
    style = token_style(frame[S.TOKEN].tolist())  # as the Sample page judges it
    assert style == IDS
    table = token_top.token_rows(frame, np.array([0, 2]), S.LOGPROB, style)
    assert table["context"].tolist() == ["⟦103⟧ 104 105 106", "103 104 ⟦105⟧ 106"]
