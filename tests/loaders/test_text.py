"""loaders.parse.text: display strings for text fields and stable prompt ids."""
import json

import pytest

from loaders.parse.text import text_id, text_of


def test_none_is_empty():
    assert text_of(None) == ""


def test_str_is_returned_as_is():
    assert text_of("  hello\nworld ") == "  hello\nworld "


def test_chat_messages_become_role_lines():
    messages = [{"role": "system", "content": "be brief"},
                {"role": "user", "content": "2+2?"},
                {"role": "assistant", "content": "4"}]
    assert text_of(messages) == "[system] be brief\n[user] 2+2?\n[assistant] 4"


def test_chat_message_without_role_shows_question_mark():
    assert text_of([{"content": "hi"}]) == "[?] hi"


def test_chat_message_content_that_is_not_a_string_is_rendered_too():
    assert text_of([{"role": "user", "content": None}]) == "[user] "
    assert text_of([{"role": "tool", "content": {"x": 1}}]) == '[tool] {"x":1}'


def test_dict_becomes_json():
    value = {"answer": 42, "unit": "m", "nested": [1, 2.5]}
    assert json.loads(text_of(value)) == value


def test_list_of_non_messages_becomes_json():
    assert json.loads(text_of([1, "a", None])) == [1, "a", None]
    # a list where only some items are messages is not a chat
    mixed = [{"role": "user", "content": "hi"}, "plain"]
    assert json.loads(text_of(mixed)) == mixed


def test_empty_list_becomes_json_brackets():
    assert text_of([]) == "[]"


def test_numbers_become_their_json_text():
    assert text_of(3) == "3"
    assert text_of(True) == "true"


def test_unserializable_value_falls_back_to_str():
    assert text_of({1, 2}) == str({1, 2})


def test_text_id_is_equal_for_equal_strings():
    assert text_id("What is 2 + 2?") == text_id("What is " + "2 + 2?")


def test_text_id_differs_for_different_strings():
    ids = {text_id(t) for t in ("a", "b", "a ", "A", "", "What is 2 + 2?")}
    assert len(ids) == 6


@pytest.mark.parametrize("text", ["", "x", "prompt " * 1000, "unicode: π‖π_ref ✓"])
def test_text_id_is_a_signed_64_bit_int(text):
    value = text_id(text)
    assert type(value) is int
    assert -(2 ** 63) <= value < 2 ** 63


def test_text_ids_use_the_negative_half_too():
    ids = [text_id(f"prompt {i}") for i in range(200)]
    assert any(i < 0 for i in ids) and any(i > 0 for i in ids)


def test_text_id_accepts_lone_surrogates():
    # json.loads can produce these from "\ud800" escapes; they must not crash hashing
    assert text_id("\ud800") != text_id("\ud801")
