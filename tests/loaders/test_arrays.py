"""loaders.parse.arrays: the alignment rule and list -> float conversion."""
import math

import numpy as np
import pytest

from loaders.parse.arrays import BadField, aligned_length, float_array, is_number_list, pack_floats


def _unpack(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=np.float64)


# ---- aligned_length ------------------------------------------------------------------------

def test_padded_tokens_align_to_shortest_and_flag_mismatch():
    obj = {"response_tokens": ["a", "b", "c", "<pad>", "<pad>"],
           "logprobs": [-0.1, -0.2, -0.3],
           "ref_logprobs": [-0.1, -0.2, -0.3, -0.4],
           "values": [0.0] * 5}
    assert aligned_length(obj) == (3, True)


def test_equal_lengths_are_not_a_mismatch():
    obj = {"response_tokens": ["a", "b"], "logprobs": [-1.0, -2.0],
           "ref_logprobs": [-1.0, -2.0], "values": [0.1, 0.2], "token_rewards": [0.0, 1.0]}
    assert aligned_length(obj) == (2, False)


def test_no_lists_gives_zero_without_mismatch():
    assert aligned_length({"step": 1, "prompt": "p", "reward": 1.0}) == (0, False)


def test_non_list_per_token_fields_are_ignored():
    obj = {"response_tokens": ["a", "b", "c"], "logprobs": None, "values": "oops"}
    assert aligned_length(obj) == (3, False)


def test_lists_outside_the_aligned_keys_do_not_count():
    obj = {"logprobs": [-1.0, -2.0], "entropy": [0.1] * 10, "prompt": [1]}
    assert aligned_length(obj) == (2, False)


def test_an_empty_list_aligns_everything_to_zero():
    obj = {"response_tokens": [], "logprobs": [-1.0, -2.0]}
    assert aligned_length(obj) == (0, True)


# ---- pack_floats ---------------------------------------------------------------------------

def test_pack_floats_roundtrips_floats():
    np.testing.assert_array_equal(_unpack(pack_floats([-0.5, 1.25, 3.0], 3)), [-0.5, 1.25, 3.0])


def test_pack_floats_turns_none_into_nan():
    out = _unpack(pack_floats([1.0, None, 3.0], 3))
    assert out[0] == 1.0 and out[2] == 3.0
    assert math.isnan(out[1])


def test_pack_floats_accepts_ints():
    out = _unpack(pack_floats([1, -2, 3], 3))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [1.0, -2.0, 3.0])


def test_pack_floats_cuts_to_n():
    np.testing.assert_array_equal(_unpack(pack_floats([1.0, 2.0, 3.0, 4.0], 2)), [1.0, 2.0])


def test_pack_floats_cuts_to_n_with_none():
    out = _unpack(pack_floats([None, 2.0, 3.0, None], 3))
    assert len(out) == 3
    assert math.isnan(out[0]) and out[1] == 2.0 and out[2] == 3.0


def test_pack_floats_keeps_nan_and_inf():
    out = _unpack(pack_floats([float("nan"), float("inf"), -1.0], 3))
    assert math.isnan(out[0]) and out[1] == math.inf and out[2] == -1.0


def test_pack_floats_rejects_a_string_element():
    with pytest.raises(BadField):
        pack_floats([1.0, "abc", 3.0], 3)


def test_pack_floats_rejects_a_nested_list():
    with pytest.raises(BadField):
        pack_floats([[1.0, 2.0], [3.0, 4.0]], 2)


# ---- float_array ---------------------------------------------------------------------------

def test_float_array_of_numbers_and_none():
    out = float_array([1, 2.5, None])
    assert out.dtype == np.float64 and out.shape == (3,)
    assert out[0] == 1.0 and out[1] == 2.5 and math.isnan(out[2])


@pytest.mark.parametrize("value", [
    [[1.0, 2.0], [3.0, 4.0]],  # nested, rectangular
    [[1.0], [2.0, 3.0]],  # nested, ragged
    ["a", "b"],
    [1.0, "x"],
    [{"a": 1}],
])
def test_float_array_rejects_nested_lists_and_strings(value):
    with pytest.raises(BadField):
        float_array(value)


@pytest.mark.parametrize("value", ["1,2,3", 3.0, None, {"a": 1}, (1.0, 2.0)])
def test_float_array_rejects_non_lists(value):
    with pytest.raises(BadField, match="expected a list of numbers"):
        float_array(value)


def test_bad_field_is_a_value_error():
    assert issubclass(BadField, ValueError)


# ---- is_number_list ------------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ([None, 1.0], True),
    ([1, 2, 3], True),
    ([0.5], True),
    ([True], False),
    ([None, False], False),
    ([], False),
    (["a"], False),
    ([None, None], False),
    ([[1.0]], False),
    ("1.0", False),
    (1.0, False),
    (None, False),
])
def test_is_number_list(value, expected):
    assert is_number_list(value) is expected
