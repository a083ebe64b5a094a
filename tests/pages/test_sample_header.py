"""The Sample page header's pure builders: the sample's own figures against the step mean,
and its place in the Responses order."""
import math

import format_fixtures as F
import orjson
import pytest
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from pages.figures.sample_header import ABSENT, Figure, order_label, place_in, sample_figures

LABELS = ["reward", "reference reward", "reward gap (RL − ref)", "KL k3 (token mean)",
          "response tokens", "response chars", "reference chars"]


def _stats(**means_and_maxes: float) -> dict:
    return {S.stat(column, "mean"): mean for column, (mean, _) in means_and_maxes.items()} | {
        S.stat(column, "max"): top for column, (_, top) in means_and_maxes.items()}


def _by_label(figures: list[Figure]) -> dict[str, Figure]:
    return {figure.label: figure for figure in figures}


def test_a_sample_shows_its_own_values_with_the_step_mean_as_context():
    row = {S.REWARD: 0.8, S.REF_REWARD: 0.25, S.REWARD_GAP: 0.55, S.kl_mean(S.K3): 0.0125,
           S.RESPONSE_LEN: 1021, S.RESPONSE_CHARS: 4300, S.REF_RESPONSE_CHARS: 900}
    stats = _stats(**{S.REWARD: (0.5, 1.0), S.REF_REWARD: (0.25, 0.25),
                      S.REWARD_GAP: (0.25, 0.75), S.kl_mean(S.K3): (0.01, 0.02),
                      S.RESPONSE_LEN: (661.7, 1021), S.RESPONSE_CHARS: (2150.0, 4300),
                      S.REF_RESPONSE_CHARS: (903.25, 1000)})
    figures = sample_figures(row, stats)
    assert [f.label for f in figures] == LABELS
    got = _by_label(figures)
    assert got["response tokens"] == Figure("response tokens", "1,021",
                                            "+359.3 vs step mean 661.7")
    assert got["response chars"].value == "4,300"
    assert got["response chars"].delta == "+2,150 vs step mean 2,150"
    assert got["reference chars"].delta == "-3.2 vs step mean 903.2"
    assert got["reward"] == Figure("reward", "0.8", "+0.3 vs step mean 0.5")
    assert got["reference reward"].delta == "+0 vs step mean 0.25"
    assert got["reward gap (RL − ref)"].value == "+0.55"
    assert got["KL k3 (token mean)"] == Figure("KL k3 (token mean)", "0.0125",
                                               "+0.0025 vs step mean 0.01")


def test_absent_fields_show_a_dash_and_no_delta():
    row = {S.REWARD: 1.0, S.REF_REWARD: math.nan, S.REWARD_GAP: math.nan,
           S.kl_mean(S.K3): math.nan, S.RESPONSE_LEN: 0, S.RESPONSE_CHARS: 12,
           S.REF_RESPONSE_CHARS: 0}
    stats = _stats(**{S.REWARD: (0.5, 1.0), S.REF_REWARD: (math.nan, math.nan),
                      S.RESPONSE_LEN: (0.0, 0), S.RESPONSE_CHARS: (10.0, 12),
                      S.REF_RESPONSE_CHARS: (0.0, 0)})
    got = _by_label(sample_figures(row, stats))
    for label in ("reference reward", "reward gap (RL − ref)", "KL k3 (token mean)",
                  "response tokens", "reference chars"):
        assert got[label] == Figure(label, ABSENT, None), label
    assert got["response chars"] == Figure("response chars", "12", "+2 vs step mean 10")


def test_a_zero_length_among_logged_ones_is_a_zero_and_no_stats_means_no_delta():
    row = {S.REWARD: 0.3, S.RESPONSE_LEN: 0, S.REF_RESPONSE_CHARS: 0}
    got = _by_label(sample_figures(row, _stats(**{S.RESPONSE_LEN: (4.0, 8)})))
    assert got["response tokens"] == Figure("response tokens", "0", "-4 vs step mean 4")
    assert got["reference chars"].value == ABSENT  # no stats: nothing says refs exist
    bare = _by_label(sample_figures(row, None))
    assert bare["reward"] == Figure("reward", "0.3", None)
    assert bare["response tokens"].value == ABSENT


def test_rounding_is_not_a_difference():
    row = {S.REWARD: 0.3}
    mean = (0.1 + 0.3 + 0.5) / 3  # 0.30000000000000004
    got = _by_label(sample_figures(row, {S.stat(S.REWARD, "mean"): mean}))
    assert got["reward"].delta == "+0 vs step mean 0.3"


@pytest.mark.parametrize("name", ["verl", "trl", "roll_dump"])
def test_formats_without_reference_or_tokens_show_dashes(tmp_path, name):
    run = open_run(F.ALL[name](tmp_path / name), use_cache=False)
    step = run.steps[-1]
    for _, row in run.step_rows(step).iterrows():
        got = _by_label(sample_figures(row, run.step_stats.loc[step]))
        for label in ("reference reward", "reward gap (RL − ref)", "KL k3 (token mean)",
                      "response tokens", "reference chars"):
            assert got[label] == Figure(label, ABSENT, None), (name, label)
        assert got["reward"].value != ABSENT and got["reward"].delta is not None
        assert got["response chars"].value == f"{row[S.RESPONSE_CHARS]:,}"


def test_values_are_the_summary_rows_and_means_the_step_stats(tmp_path):
    samples = [make_sample(1, n=n, seed=n, reward=r) for n, r in ((3, 0.5), (9, 1.0), (1200, 0.0))]
    run = open_run(write_dump(tmp_path / "d" / "rollout_data_rank_0.jsonl", samples).parent,
                   use_cache=False)
    rows = run.step_rows(1)
    long = rows[rows[S.RESPONSE_LEN] == 1200].iloc[0]
    got = _by_label(sample_figures(long, run.step_stats.loc[1], S.K1))
    assert got["response tokens"] == Figure("response tokens", "1,200",
                                            "+796 vs step mean 404")
    assert got["reward"] == Figure("reward", "0", "-0.5 vs step mean 0.5")
    assert got["reward gap (RL − ref)"].value == "-0.25"
    assert got["KL k1 (token mean)"].value == f"{long[S.kl_mean(S.K1)]:.4g}"


def test_place_in_an_order():
    order = ["a:1", "a:2", "b:1"]
    assert place_in(order, "a:1") == (0, 3, None, "a:2")
    assert place_in(order, "a:2") == (1, 3, "a:1", "b:1")
    assert place_in(order, "b:1") == (2, 3, "a:2", None)
    assert place_in(order, "c:9") is None
    assert place_in(["x:1"], "x:1") == (0, 1, None, None)


def test_order_label_names_the_sort_and_the_filters():
    assert order_label("reward", True, 40, 40) == "sort by reward, descending"
    assert order_label("length (tokens)", False, 12, 1040) == (
        "sort by length (tokens), ascending; 12 of 1,040 samples after its filters")


def test_an_infinite_reward_is_shown_as_such_not_as_missing():
    """A reward of inf is the dump's value (Groups and Responses show it): not "—", which
    reads as no reward; no difference to the step mean is drawn for it."""
    row = {S.REWARD: math.inf, S.REF_REWARD: math.nan, S.REWARD_GAP: -math.inf}
    figures = _by_label(sample_figures(row, _stats(**{S.REWARD: (0.5, 1.0)})))
    assert figures["reward"] == Figure("reward", "inf", None)
    assert figures["reward gap (RL − ref)"].value == "-inf"
    assert figures["reference reward"].value == ABSENT


def test_a_small_kl_and_its_step_mean_fit_the_chip_in_three_digits():
    """The review's D6: "-0.0001508 vs step mean 0.0097…", the mean cut by the chip's width."""
    got = {f.label: f for f in sample_figures({S.kl_mean(S.K3): 0.0095632},
                                              {S.stat(S.kl_mean(S.K3), "mean"): 0.0097140})}
    delta = next(f.delta for label, f in got.items() if label.startswith("KL"))
    assert delta == "-0.000151 vs step mean 0.00971"


def test_a_reward_the_dump_holds_as_nan_reads_nan_and_a_missing_one_a_dash(tmp_path):
    """NaN is the dump's value, and the Problems page lists the sample: it is not shown as
    a field the dump lacks."""
    line = (make_sample(1, seed=1, reward=1234.5) | {"ref_reward": None})
    path = tmp_path / "d" / "rollout_data_rank_0.jsonl"
    write_dump(path, [make_sample(1, seed=0)])
    with open(path, "ab") as handle:
        handle.write(orjson.dumps(line).replace(b"1234.5", b"NaN") + b"\n")
    run = open_run(path.parent, use_cache=False)
    sample = run.sample("rollout_data_rank_0.jsonl:2")
    assert sample.nan_scalars == {S.REWARD}
    row = run.step_rows(1).iloc[1]
    got = _by_label(sample_figures(row, run.step_stats.loc[1], nan=sample.nan_scalars))
    assert got["reward"] == Figure("reward", "NaN", None)
    assert got["reference reward"] == Figure("reference reward", ABSENT, None)
    assert _by_label(sample_figures(row, run.step_stats.loc[1]))["reward"].value == ABSENT
