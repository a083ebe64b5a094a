"""What only Python's json fallback makes out of a line: values nested past orjson's depth,
lone surrogates, integers past int()'s digit limit.  None of them may stop a load; each is
shown as encodable text and, when repaired, is a problem of its (kept) line."""
import json

import orjson
import pytest
from dump_files import line_of, make_sample

from loaders import open_run
from loaders import schema as S
from loaders.parse.record import BadLine, parse_object, parse_record
from loaders.parse.repair import problems_of
from loaders.parse.text import json_text, text_of

NAME = "rollout_data_rank_0.jsonl"


def _nested(depth: int, leaf: object = "x") -> object:
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"a": value}
    return value


@pytest.mark.parametrize("depth", [10, 254, 255, 256, 1000, 1024, 100_000])
def test_text_of_a_deep_value_is_its_json_and_never_raises(depth):
    value = _nested(depth)
    text = text_of(value)
    assert text.startswith('{"a":' if depth % 2 else '[') and text.count('"x"') == 1
    if depth <= 500:  # json.loads itself recurses
        assert json.loads(text) == value


def test_the_fallback_renders_as_orjson_does():
    value = {"a": [1, 2.5, None, True, 'q"\n', {"b": []}, ()], "c": {}, "d": 10**30}
    assert json_text({k: v for k, v in value.items() if k != "d"}) == orjson.dumps(
        {k: v for k, v in value.items() if k != "d"}).decode()
    assert json_text(value).endswith('"d":1000000000000000000000000000000}')


def test_chat_messages_nested_in_their_content_never_raise():
    chat = "hi"
    for _ in range(5000):
        chat = [{"role": "user", "content": chat}]
    text = text_of(chat)
    assert text.startswith("[user] [user] ") and text.count("hi") == 1
    assert text_of([{"role": _nested(2000), "content": "x"}]).endswith("] x")


def test_deep_text_fields_load_and_read_back(tmp_path):
    root = tmp_path / "run"
    root.mkdir()
    hole = orjson.dumps("HOLE")
    lines = [line_of(make_sample(1, seed=depth, prompt="HOLE")).replace(
        hole, b'{"a":[' * (depth // 2) + b'"x"' + b"]}" * (depth // 2)) for depth in
        (300, 1000, 1022)]  # orjson writes no more than 255 levels, reads 1024
    (root / NAME).write_bytes(b"".join(lines))
    run = open_run(root)
    assert len(run.samples) == 3 and run.bad_lines == 0
    sample = run.sample(f"{NAME}:2")
    assert sample.error is None and sample.texts[S.PROMPT].count('"x"') == 1


SURROGATE_LINE = (b'{"step": 1, "prompt": "a\\ud800b", "\\udfff": "v", "note": "\\ud83d",'
                  b' "response_tokens": ["\\udc00", " t"], "logprobs": [-0.5, -0.25],'
                  b' "reward": 0.5}')


def test_lone_surrogates_are_replaced_and_named_per_field():
    obj = parse_object(SURROGATE_LINE)
    assert obj["prompt"] == "a\ufffdb" and obj["\ufffd"] == "v" and obj["note"] == "\ufffd"
    assert obj["response_tokens"] == ["\ufffd", " t"]
    assert sorted(p.split(":")[0] for p in problems_of(obj)) == [
        "note", "prompt", "response_tokens", "\ufffd"]
    json.dumps(obj, ensure_ascii=False).encode("utf-8")  # every string encodes


def test_a_pair_of_surrogate_escapes_is_one_character_and_no_problem():
    obj = parse_object(b'{"step": 1, "prompt": "\\ud83d\\ude00", "x": NaN}')
    assert obj["prompt"] == "\U0001f600" and problems_of(obj) == []


def test_two_keys_that_repair_to_one_keep_the_first_and_say_so():
    obj = parse_object(b'{"step": 1, "k\\ud800": 1, "k\\udfff": 2}')
    assert obj["k\ufffd"] == 1 and "first kept" in problems_of(obj)[0]


def test_a_line_with_lone_surrogates_is_kept_with_a_field_problem(tmp_path):
    root = tmp_path / "run"
    root.mkdir()
    (root / NAME).write_bytes(line_of(make_sample(0)) + SURROGATE_LINE + b"\n")
    for _ in range(2):  # parsed, then from the index
        run = open_run(root)
        assert len(run.samples) == 2 and run.bad_lines == 0
        row = run.with_previews(run.samples).iloc[1]
        assert row[S.PROMPT] == "a\ufffdb" and row["\ufffd"] == "v"
        problems = [p for p in run.problems if p["line"] == 2]
        assert problems and not any(p["dropped"] for p in problems)
        assert any("U+FFFD" in p["reason"] for p in problems)
    sample = run.sample(f"{NAME}:2")
    assert sample.error is None and sample.texts[S.PROMPT] == "a\ufffdb"
    assert sample.tokens[S.TOKEN].tolist() == ["\ufffd", " t"]


DIGITS = b"9" * 5000


def test_an_integer_past_the_digit_limit_is_a_field_problem_not_a_crash():
    obj = parse_record(b'{"step": 2, "reward": ' + DIGITS + b', "prompt": "p"}')
    assert obj["reward"] == "<an integer of 5,000 digits>" and type(obj["reward"]) is str
    assert problems_of(obj) == ["reward: an integer of 5,000 digits, past what can be read; "
                                "kept as text"]


def test_a_step_past_the_digit_limit_is_a_bad_line():
    with pytest.raises(BadLine, match="step"):
        parse_record(b'{"step": ' + DIGITS + b', "reward": 1}')
    with pytest.raises(BadLine, match="not a JSON object"):
        parse_object(b"[" + DIGITS + b"]")


def test_a_line_with_a_long_integer_is_kept_and_the_rest_of_the_file_too(tmp_path):
    root = tmp_path / "run"
    root.mkdir()
    (root / NAME).write_bytes(
        line_of(make_sample(0)) + b'{"step": 1, "reward": -' + DIGITS + b', "meta": [1, '
        + DIGITS + b"]}\n" + b'{"step": ' + DIGITS + b"}\n" + line_of(make_sample(2)))
    run = open_run(root)
    assert run.samples[S.STEP].tolist() == [0, 1, 2] and run.bad_lines == 1
    reasons = {p["line"]: p["reason"] for p in run.problems}
    assert "5,000 digits" in reasons[2] and "step" in reasons[3]
    assert run.samples.iloc[1][S.REWARD] != run.samples.iloc[1][S.REWARD]  # NaN, not a guess
