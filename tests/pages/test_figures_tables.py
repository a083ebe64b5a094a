"""Responses table builders: sort choices, keys, filtering, sorting and the displayed view."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dump_files import make_sample, write_dump
from regex import IGNORECASE
from regex import compile as pattern

from loaders import open_run
from loaders import schema as S
from pages.figures import tables as T
from pages.frame.view import DisplayOptions

FILE = "rollout_data_rank_0.jsonl"
PADDED_TOKENS = [" t0", " t1", " t2", " t3", "<PAD>", "<PAD>"]
LONG_RESPONSE = "A" * 500 + " needle"  # the match lies beyond the summary's preview


def _with_nan_logprob(sample: dict, at: int) -> dict:
    sample["logprobs"][at] = None  # written as null, read back as NaN
    return sample


def _samples() -> list[dict]:
    """One step; each sample has its own token count so the max-length rule flags nothing."""
    return [
        make_sample(0, n=3, seed=1, reward=0.1, acc=1, entropy=[0.5, 1.5, 4.0]),
        make_sample(0, n=4, seed=2, reward=0.5, response="hi there<PAD><PAD>",
                    response_tokens=PADDED_TOKENS, ref_response="ref<PAD>"),
        make_sample(0, n=5, seed=3, reward=0.9, prompt="sys<endofsystem>question"),
        make_sample(0, n=6, seed=4, reward=None),
        make_sample(0, n=7, seed=5, reward=0.5, response=LONG_RESPONSE),
        _with_nan_logprob(make_sample(0, n=8, seed=6, reward=0.3, truncated=True), 2),
        make_sample(0, n=9, seed=7, reward=0.7, truncated=True),
        _with_nan_logprob(make_sample(0, n=10, seed=8, reward=0.2), 0),
        make_sample(0, n=11, seed=9, reward=0.05, response="b" * T.TABLE_PREVIEW, unused=None,
                    finish_reason="stop"),
    ]


REWARDS = [0.1, 0.5, 0.9, np.nan, 0.5, 0.3, 0.7, 0.2, 0.05]  # as written above, by line - 1


@pytest.fixture
def dump(tmp_path: Path) -> tuple[list[dict], object]:
    samples = _samples()
    run = open_run(write_dump(tmp_path / "run" / FILE, samples).parent, use_cache=False)
    return samples, run


def _rows(run) -> pd.DataFrame:
    rows = run.with_previews(run.samples)
    assert rows[S.FILE].tolist() == [FILE] * 9
    assert rows[S.LINE].tolist() == list(range(1, 10))  # one rank, one step: file order
    return rows


def _lines(rows: pd.DataFrame) -> list[int]:
    return rows[S.LINE].tolist()


# ---- sort choices -------------------------------------------------------------------------

@pytest.mark.parametrize("estimator", S.KL_ESTIMATORS)
def test_sort_choices_name_real_summary_columns(dump, estimator):
    _, run = dump
    choices = T.sort_choices(estimator)
    assert set(choices.values()) <= set(run.samples.columns)
    assert f"KL {estimator} mean" in choices and f"KL {estimator} sum" in choices
    assert len(set(choices.values())) == len(choices)


def test_sort_choices_kl_columns_hold_that_estimator(dump):
    samples, run = dump
    rows = _rows(run)
    lp, ref = np.array(samples[0]["logprobs"]), np.array(samples[0]["ref_logprobs"])
    r = lp - ref
    expected = {"k1": r, "k2": r**2 / 2, "k3": np.exp(-r) - 1 + r,
                "k3_reverse": np.exp(r) - 1 - r}
    for estimator, per_token in expected.items():
        choices = T.sort_choices(estimator)
        first = rows.iloc[0]
        assert first[choices[f"KL {estimator} mean"]] == pytest.approx(per_token.mean())
        assert first[choices[f"KL {estimator} sum"]] == pytest.approx(per_token.sum())
    choices = T.sort_choices("k3")
    assert rows.iloc[0][choices["log_ratio mean"]] == pytest.approx(r.mean())
    assert rows.iloc[0][choices["log_ratio sum"]] == pytest.approx(r.sum())
    assert rows[choices["length (tokens)"]].tolist() == list(range(3, 12))
    np.testing.assert_array_equal(rows[choices["reward"]], REWARDS)
    np.testing.assert_allclose(rows[choices["reward gap (r − ref_r)"]],
                               np.array(REWARDS) - 0.25)
    assert (rows[choices["ref_reward"]] == 0.25).all()


# ---- keys ---------------------------------------------------------------------------------

def test_keys_open_the_right_sample_in_a_real_dump(tmp_path):
    root = tmp_path / "run"
    write_dump(root / "a:b.jsonl", [make_sample(0, seed=1), make_sample(1, seed=2)])
    write_dump(root / "sub" / "dir" / "r:0.jsonl", [make_sample(0, seed=3, prompt="deep")])
    run = open_run(root, use_cache=False)
    keys = T.table_view(run.with_previews(run.samples), DisplayOptions())[T.KEY].tolist()
    assert sorted(keys) == ["a:b.jsonl:1", "a:b.jsonl:2", "sub/dir/r:0.jsonl:1"]
    assert run.sample("sub/dir/r:0.jsonl:1").texts[S.PROMPT] == "deep"
    assert run.sample("a:b.jsonl:2").step == 1


# ---- filtering ----------------------------------------------------------------------------

def test_filter_nothing_keeps_everything(dump):
    rows = _rows(dump[1])
    assert _lines(T.filter_rows(rows)) == list(range(1, 10))


def test_filter_reward_range_is_inclusive_and_leaves_out_a_missing_reward(dump):
    """A range is asked for only when narrowed (ranges.opened): then it keeps what a
    histogram bar counts, the rewards in it, and no missing one."""
    rows = _rows(dump[1])
    kept = T.filter_rows(rows, reward_range=(0.2, 0.5))
    expected = [i + 1 for i, r in enumerate(REWARDS) if 0.2 <= r <= 0.5]
    assert _lines(kept) == expected == [2, 5, 6, 8]
    assert _lines(T.filter_rows(rows, reward_range=(2.0, 3.0))) == []
    assert len(T.filter_rows(rows)) == len(rows)  # no range: every row, the NaN one too


def test_filter_flags_needs_every_flag(dump):
    rows = _rows(dump[1])
    assert _lines(T.filter_rows(rows, flags=(S.LENGTH_MISMATCH,))) == [2]
    assert _lines(T.filter_rows(rows, flags=(S.TRUNCATED,))) == [6, 7]
    assert _lines(T.filter_rows(rows, flags=(S.NONFINITE,))) == [6, 8]
    assert _lines(T.filter_rows(rows, flags=(S.TRUNCATED, S.NONFINITE))) == [6]
    assert _lines(T.filter_rows(rows, flags=(S.LENGTH_MISMATCH, S.NONFINITE))) == []


def test_filter_regex_over_previews(dump):
    rows = _rows(dump[1])
    regex = pattern(r"QUESTION \d", IGNORECASE)  # every prompt but line 3's
    assert _lines(T.filter_rows(rows, regex=regex)) == [1, 2, 4, 5, 6, 7, 8, 9]
    # the needle sits past the 400-char preview: the previews cannot find it
    assert len(rows.iloc[4][S.RESPONSE]) == S.PREVIEW_CHARS
    assert _lines(T.filter_rows(rows, regex=pattern("needle"))) == []
    assert _lines(T.filter_rows(rows, regex=pattern("^hi there"))) == []  # prompt first
    assert _lines(T.filter_rows(rows, regex=pattern("(?m)^hi there"))) == [2]


def test_filter_regex_over_full_texts(dump):
    samples, run = dump
    rows = _rows(run)
    texts = {key: t[S.PROMPT] + "\n" + t[S.RESPONSE] for key, t in run.step_texts(0).items()}
    assert texts[f"{FILE}:5"] == samples[4]["prompt"] + "\n" + LONG_RESPONSE
    assert _lines(T.filter_rows(rows, regex=pattern("needle"), texts=texts)) == [5]
    # the texts dict, not the previews, is searched: a key it lacks never matches
    partial = {f"{FILE}:2": "needle", f"{FILE}:9": "nothing"}
    assert _lines(T.filter_rows(rows, regex=pattern("needle"), texts=partial)) == [2]
    assert _lines(T.filter_rows(rows, regex=pattern("."), texts=partial)) == [2, 9]


def test_filters_combine(dump):
    rows = _rows(dump[1])
    kept = T.filter_rows(rows, reward_range=(0.0, 0.25), flags=(S.NONFINITE,),
                         regex=pattern("question", IGNORECASE))
    assert _lines(kept) == [8]


# ---- sorting ------------------------------------------------------------------------------

def test_sort_rows_descending_nan_last(dump):
    rows = _rows(dump[1])
    out = T.sort_rows(rows, S.REWARD, descending=True)
    # 0.5 appears on lines 2 and 5: a stable sort keeps them in that order
    assert _lines(out) == [3, 7, 2, 5, 6, 8, 1, 9, 4]
    values = out[S.REWARD].to_numpy()
    assert np.all(np.diff(values[:-1]) <= 0) and np.isnan(values[-1])


def test_sort_rows_ascending_nan_last(dump):
    rows = _rows(dump[1])
    out = T.sort_rows(rows, S.REWARD, descending=False)
    assert _lines(out) == [9, 1, 8, 6, 2, 5, 7, 3, 4]
    assert np.isnan(out[S.REWARD].iloc[-1])


def test_sort_rows_by_extra_and_text_columns(dump):
    rows = _rows(dump[1])
    # acc is only on line 1; all the others are NaN and keep file order after it
    assert _lines(T.sort_rows(rows, "acc", descending=False)) == list(range(1, 10))
    assert _lines(T.sort_rows(rows, S.RESPONSE_LEN, descending=True)) == list(range(9, 0, -1))
    assert _lines(T.sort_rows(rows, S.REF_REWARD)) == list(range(1, 10))  # all tied: stable


# ---- the displayed table ------------------------------------------------------------------

BASE_COLUMNS = [T.KEY, S.PROMPT, S.RESPONSE, S.REWARD, S.GROUND_TRUTH, S.LOG_RATIO_MEAN,
                S.LOG_RATIO_SUM]


def test_extra_columns(dump):
    rows = _rows(dump[1])
    extras = T.extra_columns(rows)
    # entropy arrives as its mean; truncated collides with the schema and gets a prefix;
    # unused is null everywhere and so left out
    assert sorted(extras) == sorted(["acc", "entropy_mean", "extra_truncated", "finish_reason"])
    assert not set(extras) & set(S.BOARD_COLUMNS)
    assert T.extra_columns(rows.drop(columns=extras)) == []


def test_table_view_columns_and_values(dump):
    samples, run = dump
    rows = _rows(run)
    view = T.table_view(rows, DisplayOptions(kl_estimator=S.K2))
    expected = BASE_COLUMNS + [S.kl_mean(S.K2), S.kl_sum(S.K2), S.RESPONSE_LEN,
                               S.REF_RESPONSE, S.REF_REWARD, S.REWARD_GAP, S.POLICY_LAG,
                               "flags"]
    assert list(view.columns)[: len(expected)] == expected
    assert sorted(view.columns[len(expected):]) == sorted(T.extra_columns(rows))
    assert len(view) == len(rows)
    assert view[T.KEY].tolist() == [f"{FILE}:{i}" for i in range(1, 10)]
    np.testing.assert_array_equal(view[S.REWARD], REWARDS)
    r = np.array(samples[0]["logprobs"]) - np.array(samples[0]["ref_logprobs"])
    assert view[S.kl_mean(S.K2)].iloc[0] == pytest.approx(np.mean(r**2 / 2))
    assert view[S.kl_sum(S.K2)].iloc[0] == pytest.approx(np.sum(r**2 / 2))
    assert view[S.LOG_RATIO_SUM].iloc[0] == pytest.approx(r.sum())
    assert view["acc"].iloc[0] == 1.0 and view["acc"].iloc[1:].isna().all()
    assert view["entropy_mean"].iloc[0] == pytest.approx(np.mean([0.5, 1.5, 4.0]))
    assert view["finish_reason"].iloc[8] == "stop"
    assert view[S.GROUND_TRUTH].tolist() == [str(s["step"] + len(s["logprobs"]))
                                             for s in samples]


def test_table_view_keeps_row_order_of_a_sorted_filtered_frame(dump):
    rows = _rows(dump[1])
    shown = T.sort_rows(T.filter_rows(rows, reward_range=(0.3, 1.0)), S.REWARD)
    view = T.table_view(shown, DisplayOptions())
    assert view[T.KEY].tolist() == [f"{FILE}:{n}" for n in (3, 7, 2, 5, 6)]
    np.testing.assert_array_equal(view[S.REWARD], [0.9, 0.7, 0.5, 0.5, 0.3])


def test_table_view_strips_system_prompt_and_pad(dump):
    rows = _rows(dump[1])
    view = T.table_view(rows, DisplayOptions())
    assert view[S.PROMPT].iloc[2] == "question"
    assert view[S.RESPONSE].iloc[1] == "hi there"
    assert view[S.REF_RESPONSE].iloc[1] == "ref"
    assert view[S.PROMPT].iloc[0] == "Question 1: what is 0 + 3?"  # no marker: unchanged
    # with other settings the same rows keep the marker and the pad tokens
    other = T.table_view(rows, DisplayOptions(pad_token="", system_marker="###"))
    assert other[S.PROMPT].iloc[2] == "sys<endofsystem>question"
    assert other[S.RESPONSE].iloc[1] == "hi there<PAD><PAD>"


def test_table_view_truncates_long_text(dump):
    rows = _rows(dump[1])
    view = T.table_view(rows, DisplayOptions())
    assert view[S.RESPONSE].iloc[4] == "A" * T.TABLE_PREVIEW + "…"
    assert view[S.RESPONSE].iloc[8] == "b" * T.TABLE_PREVIEW  # exactly at the limit: whole
    assert all(len(t) <= T.TABLE_PREVIEW + 1 for t in view[S.RESPONSE])


def test_table_view_flag_text(dump):
    rows = _rows(dump[1])
    flags = T.table_view(rows, DisplayOptions())["flags"].tolist()
    assert flags == ["", "length mismatch", "", "", "", "truncated, non-finite", "truncated",
                     "non-finite", ""]
    assert T.flag_text(rows) == flags
    assert set(T.FLAG_LABELS) == set(S.FLAGS)


def test_table_view_of_no_rows(dump):
    rows = _rows(dump[1])
    empty = T.filter_rows(rows, flags=(S.LENGTH_MISMATCH, S.NONFINITE))
    view = T.table_view(empty, DisplayOptions())
    assert len(view) == 0 and T.KEY in view.columns and "flags" in view.columns


def test_extra_keys_named_like_view_columns_do_not_replace_them(tmp_path):
    samples = [make_sample(0, n=3, seed=1, key="trainer-id-1", flags="mine"),
               make_sample(0, n=4, seed=2)]
    run = open_run(write_dump(tmp_path / "run" / FILE, samples).parent, use_cache=False)
    view = T.table_view(run.with_previews(run.samples), DisplayOptions())
    assert view[T.KEY].tolist() == [f"{FILE}:1", f"{FILE}:2"]
    assert view["flags"].tolist() == ["", ""]


def test_pages_of_rows_cover_every_row_once():
    import pandas as pd

    from pages.figures.tables import page_count, page_of
    rows = pd.DataFrame({"x": range(1201)})
    assert page_count(1201, 500) == 3 and page_count(0, 500) == 1
    parts = [page_of(rows, p, 500) for p in (1, 2, 3)]
    assert [len(p) for p in parts] == [500, 500, 201]
    assert pd.concat(parts)["x"].tolist() == list(range(1201))
    assert page_of(rows, 9, 500)["x"].iloc[0] == 1000  # past the end: the last page


def test_the_sorted_column_follows_the_texts_and_empty_columns_go():
    import numpy as np
    import pandas as pd

    from loaders import schema as S
    from pages.figures.tables import KEY, arranged
    view = pd.DataFrame({KEY: ["a:1", "a:2"], S.PROMPT: ["p", "q"], S.RESPONSE: ["r", ""],
                         S.REWARD: [np.nan, np.nan], S.REF_RESPONSE: ["", ""],
                         S.REF_REWARD: [np.nan, np.nan], "flags": ["", ""],
                         S.RESPONSE_LEN: [3, 4], S.kl_mean(S.K3): [0.1, 0.2],
                         "truncated": [False, False]})
    out = arranged(view, S.kl_mean(S.K3))
    assert list(out.columns) == [KEY, S.PROMPT, S.RESPONSE, S.kl_mean(S.K3), S.REWARD,
                                 S.RESPONSE_LEN, "truncated"]
    assert list(arranged(view, S.REWARD).columns)[:4] == [KEY, S.PROMPT, S.RESPONSE, S.REWARD]


def test_rows_note_names_a_pages_rows_and_nothing_for_no_rows():
    from pages.figures.tables import rows_note

    assert rows_note(0, 1, 500) == ""  # no rows: no range
    assert rows_note(500, 1, 500) == " · rows 1–500 (page 1 of 1)"
    assert rows_note(1201, 1, 500) == " · rows 1–500 (page 1 of 3)"
    assert rows_note(1201, 3, 500) == " · rows 1,001–1,201 (page 3 of 3)"
    assert rows_note(1201, 9, 500) == " · rows 1,001–1,201 (page 3 of 3)"  # clamped
