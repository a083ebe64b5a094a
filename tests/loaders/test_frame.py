"""loaders.index.table: typing, sorting and the truncation flag of the per-sample frame."""
import numpy as np
import pandas as pd
import pytest

from loaders import schema as S
from loaders.index import table as frame


def _rows(**columns):
    """A frame part like the scanner makes: every row has file/line/rank/step."""
    n = len(next(iter(columns.values())))
    base = {S.FILE: ["r.jsonl"] * n, S.LINE: list(range(1, n + 1)), S.RANK: [0] * n,
            S.STEP: [0] * n, S.NAN_COUNT: [0] * n}
    base.update(columns)
    return pd.DataFrame(base)


# ---- typed ------------------------------------------------------------------------------

def test_typed_adds_every_missing_schema_column_with_its_dtype():
    out = frame.typed(pd.DataFrame({S.STEP: [3, 1]}))
    for name, dtype in S.SUMMARY_DTYPES.items():
        assert name in out.columns, name
        assert str(out[name].dtype) == dtype, name
    assert out[S.STEP].tolist() == [3, 1]


@pytest.mark.parametrize("column, fill", [
    (S.RANK, -1), (S.LINE, 0), (S.NAN_COUNT, 0), (S.TRUNCATED, False), (S.PROMPT, ""),
])
def test_typed_fills_added_columns(column, fill):
    out = frame.typed(pd.DataFrame({S.STEP: [1, 2]}))
    assert out[column].tolist() == [fill, fill]


def test_typed_fills_added_float_columns_with_nan():
    out = frame.typed(pd.DataFrame({S.STEP: [1, 2]}))
    assert out[S.REWARD].isna().all()


def test_typed_fills_missing_values_in_int_and_bool_columns():
    out = frame.typed(pd.DataFrame({S.STEP: [1, 2], S.RANK: [3, None],
                                    S.LENGTH_MISMATCH: [True, None]}))
    assert out[S.RANK].tolist() == [3, -1]
    assert out[S.LENGTH_MISMATCH].tolist() == [True, False]


def test_typed_casts_present_columns():
    out = frame.typed(pd.DataFrame({S.STEP: [1.0, 2.0], S.REWARD: [1, 2]}))
    assert str(out[S.STEP].dtype) == "int64" and out[S.STEP].tolist() == [1, 2]
    assert str(out[S.REWARD].dtype) == "float64"


def test_all_numeric_extra_object_column_becomes_numeric():
    out = frame.typed(pd.DataFrame({S.STEP: [1, 2, 3],
                                    "temperature": pd.Series([0.7, "1.5", None],
                                                             dtype="object")}))
    assert pd.api.types.is_numeric_dtype(out["temperature"])
    assert out["temperature"].iloc[0] == 0.7 and out["temperature"].iloc[1] == 1.5
    assert np.isnan(out["temperature"].iloc[2])


def test_mixed_extra_object_column_becomes_string():
    out = frame.typed(pd.DataFrame({S.STEP: [1, 2, 3],
                                    "tag": pd.Series(["easy", 2, None], dtype="object")}))
    assert str(out["tag"].dtype) == "string"
    assert out["tag"].iloc[0] == "easy" and out["tag"].iloc[1] == "2"
    assert out["tag"].isna().iloc[2]


def test_all_missing_extra_column_is_numeric_nan():
    out = frame.typed(pd.DataFrame({S.STEP: [1, 2], "maybe": [None, None]}))
    assert pd.api.types.is_numeric_dtype(out["maybe"]) and out["maybe"].isna().all()


def test_float_extra_column_is_left_alone():
    out = frame.typed(pd.DataFrame({S.STEP: [1, 2], "entropy_mean": [0.25, np.nan]}))
    assert str(out["entropy_mean"].dtype) == "float64"
    assert out["entropy_mean"].iloc[0] == 0.25


# ---- combine ----------------------------------------------------------------------------

def test_combine_sorts_by_step_rank_file_line():
    part_a = _rows(**{S.FILE: ["b.jsonl", "b.jsonl", "a.jsonl"], S.LINE: [2, 1, 5],
                      S.RANK: [0, 0, 0], S.STEP: [1, 1, 1]})
    part_b = _rows(**{S.FILE: ["c.jsonl", "a.jsonl", "a.jsonl"], S.LINE: [1, 9, 3],
                      S.RANK: [1, 0, 0], S.STEP: [0, 1, 0]})
    out = frame.combine([part_a, part_b])
    keys = list(zip(out[S.STEP], out[S.RANK], out[S.FILE], out[S.LINE]))
    assert keys == [(0, 0, "a.jsonl", 3), (0, 1, "c.jsonl", 1), (1, 0, "a.jsonl", 5),
                    (1, 0, "a.jsonl", 9), (1, 0, "b.jsonl", 1), (1, 0, "b.jsonl", 2)]
    assert out.index.tolist() == list(range(6))


def test_combine_keeps_row_values_with_their_keys():
    part = _rows(**{S.STEP: [2, 1], S.REWARD: [0.2, 0.1]})
    out = frame.combine([part])
    assert out[S.STEP].tolist() == [1, 2] and out[S.REWARD].tolist() == [0.1, 0.2]


def test_combine_of_nothing_is_the_typed_empty_frame():
    for parts in ([], [_rows(**{S.STEP: []})]):
        out = frame.combine(parts)
        assert len(out) == 0
        assert {n: str(out[n].dtype) for n in S.SUMMARY_DTYPES} == S.SUMMARY_DTYPES


def test_combine_derives_nonfinite_from_nan_count():
    out = frame.combine([_rows(**{S.NAN_COUNT: [0, 2, 0]})])
    assert out[S.NONFINITE].tolist() == [False, True, False]


def test_combine_file_is_categorical():
    out = frame.combine([_rows(**{S.STEP: [0, 1]})])
    assert str(out[S.FILE].dtype) == "category"


# ---- truncated --------------------------------------------------------------------------

def test_two_samples_at_the_max_length_are_truncated():
    out = frame.combine([_rows(**{S.RESPONSE_LEN: [7, 3, 7, 5]})])
    assert out[S.TRUNCATED].tolist() == [True, False, True, False]


def test_a_single_sample_at_the_max_is_not_truncated():
    out = frame.combine([_rows(**{S.RESPONSE_LEN: [7, 3, 6, 5]})])
    assert not out[S.TRUNCATED].any()


def test_all_zero_lengths_are_not_truncated():
    out = frame.combine([_rows(**{S.RESPONSE_LEN: [0, 0, 0]})])
    assert not out[S.TRUNCATED].any()


def test_explicit_extra_truncated_flags():
    part = _rows(**{S.RESPONSE_LEN: [5, 4, 3], "extra_truncated": [0.0, 1.0, np.nan]})
    out = frame.combine([part])
    assert out[S.TRUNCATED].tolist() == [False, True, False]


def test_explicit_is_truncated_flags():
    part = _rows(**{S.RESPONSE_LEN: [5, 4, 3], "is_truncated": [1.0, 0.0, 0.0]})
    assert frame.combine([part])[S.TRUNCATED].tolist() == [True, False, False]


@pytest.mark.parametrize("column", ["finish_reason", "stop_reason"])
def test_finish_reason_length_flags(column):
    part = _rows(**{S.RESPONSE_LEN: [5, 4, 3], column: ["stop", "length", None]})
    assert frame.combine([part])[S.TRUNCATED].tolist() == [False, True, False]


def test_the_dumps_own_ending_decides_and_the_cap_only_where_it_says_none():
    """"stop" at the cap is not a cut; the cap is inferred only for the sample that says
    nothing of how it ended, and named as inferred."""
    part = _rows(**{S.RESPONSE_LEN: [9, 9, 9, 2],
                    "finish_reason": ["stop", "length", None, "length"]})
    combined = frame.combine([part])
    assert combined[S.TRUNCATED].tolist() == [False, True, True, True]
    assert combined[S.TRUNCATION_INFERRED].tolist() == [False, False, True, False]


def test_truncated_directly_on_a_typed_frame():
    typed = frame.typed(pd.DataFrame({S.RESPONSE_LEN: [4, 4, 1]}))
    flags, inferred = frame.truncated(typed)
    assert flags.dtype == bool and flags.tolist() == [True, True, False]
    assert inferred.tolist() == [True, True, False]


def test_an_ending_column_of_empty_texts_says_nothing_and_is_not_read():
    """A finish reason no line gave is empty text in every row: the cap decides alone, as
    when the column is absent; one "length" among empties still decides its row."""
    empty = _rows(**{S.RESPONSE_LEN: [9, 9, 2], S.LAST_FINISH: ["", "", ""]})
    assert frame.combine([empty])[S.TRUNCATION_INFERRED].tolist() == [True, True, False]
    one = _rows(**{S.RESPONSE_LEN: [9, 9, 2], S.LAST_FINISH: ["", "length", ""]})
    combined = frame.combine([one])
    assert combined[S.TRUNCATED].tolist() == [True, True, False]
    assert combined[S.TRUNCATION_INFERRED].tolist() == [True, False, False]
    assert not frame.holds_text(pd.Series(["", None], dtype="string"))
    assert frame.holds_text(pd.Series(["", "x"], dtype="str"))
    assert frame.holds_text(pd.Series([1.0, None]))  # not Arrow text: the caller reads it
