"""loaders.parse.record: one jsonl line -> one dict with an int step, or a BadLine with a reason."""
import json
import math

import pytest

from loaders.parse.record import BadLine, parse_record, parse_step


def test_plain_line_parses_to_dict():
    obj = parse_record(b'{"step": 3, "prompt": "hi", "logprobs": [-0.5, -1.25]}')
    assert obj == {"step": 3, "prompt": "hi", "logprobs": [-0.5, -1.25]}


def test_nan_and_infinity_literals_from_python_json_dumps_are_accepted():
    raw = json.dumps({"step": 1, "reward": float("nan"), "hi": float("inf"),
                      "lo": float("-inf"), "logprobs": [-1.0, float("nan")]}).encode()
    assert b"NaN" in raw and b"-Infinity" in raw  # the literals strict JSON rejects
    obj = parse_record(raw)
    assert isinstance(obj["reward"], float) and math.isnan(obj["reward"])
    assert obj["hi"] == math.inf
    assert obj["lo"] == -math.inf
    assert obj["logprobs"][0] == -1.0 and math.isnan(obj["logprobs"][1])


def test_bom_prefix_is_stripped():
    assert parse_record(b'\xef\xbb\xbf{"step": 2}') == {"step": 2}


def test_trailing_carriage_return_is_stripped():
    assert parse_record(b'{"step": 2, "response": "ok"}\r') == {"step": 2, "response": "ok"}


def test_bom_and_carriage_return_together():
    assert parse_record(b'\xef\xbb\xbf{"step": 5}\r') == {"step": 5}


def test_invalid_utf8_inside_string_is_replaced_and_line_still_parses():
    obj = parse_record(b'{"step": 1, "response": "ab\xff\xfecd"}')
    assert obj["step"] == 1
    assert obj["response"].startswith("ab") and obj["response"].endswith("cd")
    assert "\ufffd" in obj["response"]
    assert obj["response"].replace("\ufffd", "") == "abcd"


def test_invalid_utf8_together_with_nan_literal():
    obj = parse_record(b'{"step": 1, "response": "x\xff", "reward": NaN}')
    assert obj["response"] == "x\ufffd"
    assert math.isnan(obj["reward"])


@pytest.mark.parametrize("raw_step", [b"4", b"4.0", b'"4"', b'" 4 "'])
def test_step_forms_become_int_4(raw_step):
    obj = parse_record(b'{"step": ' + raw_step + b"}")
    assert obj["step"] == 4
    assert type(obj["step"]) is int


@pytest.mark.parametrize("value", [4, 4.0, "4", " 4 ", "4.0"])
def test_parse_step_accepts_integral_values(value):
    step = parse_step(value)
    assert step == 4 and type(step) is int


@pytest.mark.parametrize("raw_step, shown", [
    (b'"abc"', "abc"),
    (b"4.5", "4.5"),
    (b"true", "True"),
    (b"null", "None"),
])
def test_bad_step_values_raise_badline_naming_the_value(raw_step, shown):
    with pytest.raises(BadLine) as err:
        parse_record(b'{"step": ' + raw_step + b"}")
    message = str(err.value)
    assert message.startswith("step is not an integer")
    assert shown in message


@pytest.mark.parametrize("value", ["inf", "nan", "", "4.5", False])
def test_parse_step_rejects_non_integral(value):
    with pytest.raises(BadLine):
        parse_step(value)


def test_missing_step_raises_badline():
    with pytest.raises(BadLine, match="missing 'step'"):
        parse_record(b'{"prompt": "no step here"}')


def test_long_bad_step_is_cut_in_message():
    with pytest.raises(BadLine) as err:
        parse_record(json.dumps({"step": "x" * 500}).encode())
    assert len(str(err.value)) < 100


@pytest.mark.parametrize("raw, kind", [
    (b"[1, 2, 3]", "list"),
    (b"42", "int"),
    (b'"just a string"', "str"),
])
def test_non_object_line_raises_badline(raw, kind):
    with pytest.raises(BadLine) as err:
        parse_record(raw)
    assert str(err.value) == f"not a JSON object (got {kind})"


@pytest.mark.parametrize("raw", [
    b'{"step": 1, "logprobs": [-0.5,',
    b'{"step": 1, "prompt": "unterminated',
    b"{not json",
    b"",
])
def test_truncated_or_garbage_json_raises_invalid_json(raw):
    with pytest.raises(BadLine) as err:
        parse_record(raw)
    assert str(err.value).startswith("invalid JSON")


def test_invalid_json_message_gives_column():
    with pytest.raises(BadLine) as err:
        parse_record(b'{"step": 1,, "x": 2}')
    assert "column" in str(err.value)


def test_badline_is_a_value_error():
    assert issubclass(BadLine, ValueError)
