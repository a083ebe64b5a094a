"""The long-response token views' pure parts: binning keeps a lone spike, top-K against a
brute force, thresholds, <think> marks, and token pieces shown as text."""
import math

import numpy as np
import pandas as pd
import pytest
from token_dumps import SPIKE_LOG_RATIO, long_sample

from loaders import schema as S
from loaders.serve.token_table import token_table
from pages.figures import token_strip as B
from pages.figures import token_text as T
from pages.figures import token_top as P

N = 32_768


# ---- binning --------------------------------------------------------------------------------

def test_binning_keeps_one_extreme_token_in_32k():
    sample = long_sample(N, spike=23_456)
    frame = token_table(sample)
    lr = frame[S.LOG_RATIO].to_numpy()
    data = B.binned(lr)
    assert len(data.mean) == B.BINS  # binned to the chart, not one mark per token
    hit = int(np.searchsorted(data.end, 23_456, side="right"))
    assert data.start[hit] <= 23_456 < data.end[hit]
    assert data.high[hit] == pytest.approx(SPIKE_LOG_RATIO, abs=1e-5)  # the spike survives
    others = np.delete(data.high, hit)
    assert others.max() < 1.0  # ... and stands out of every other bin
    assert data.mean[hit] < 1.0  # where a mean alone would have hidden it


def test_bins_cover_every_token_once_and_agree_with_numpy():
    rng = np.random.default_rng(3)
    values = rng.normal(size=10_001)
    values[[5, 777, 9_999]] = [np.nan, np.inf, -np.inf]  # skipped, never a bin's value
    data = B.binned(values, bins=97)
    assert data.start[0] == 0 and data.end[-1] == len(values)
    np.testing.assert_array_equal(data.start[1:], data.end[:-1])
    for a, b, lo, hi, mean in zip(*data):
        part = values[a:b][np.isfinite(values[a:b])]
        assert (lo, hi) == (part.min(), part.max())
        assert mean == pytest.approx(part.mean())


def test_short_response_is_one_bin_per_token_and_empty_bins_are_nan():
    data = B.binned(np.array([1.0, np.nan, 3.0]))
    assert data.start.tolist() == [0, 1, 2] and data.end.tolist() == [1, 2, 3]
    assert np.isnan(data.low[1]) and np.isnan(data.high[1]) and np.isnan(data.mean[1])
    assert len(B.binned(np.zeros(0)).mean) == 0


def _layer(strip: B.Strip, mark: str) -> list[dict]:
    return [layer for layer in strip.spec["layer"] if layer["mark"]["type"] == mark]


def test_strips_stay_small_at_32k_tokens():
    frame = token_table(long_sample(N, spike=100))
    columns = {m: frame[m].to_numpy() for m in (S.LOG_RATIO, S.K3, S.VALUE, "entropy")}
    marks = B.think_marks(frame[S.TOKEN].tolist())
    strips = B.strip_charts(columns, (1000, 1256), marks, {S.K3: np.arange(0, N, 3)})
    assert [s.name for s in strips] == list(columns)
    assert all(len(s.data) <= B.BINS for s in strips)  # a row a bin, whatever the length
    dots = [layer["data"]["values"] for s in strips for layer in _layer(s, "point")
            if "data" in layer]
    assert len(dots) == 1 and B.MAX_HIT_MARKS // 2 < len(dots[0]) <= B.MAX_HIT_MARKS
    window = _layer(strips[0], "rect")[0]["data"]["values"][0]
    assert (window["x0"], window["x1"]) == (999.5, 1255.5)
    labels = _layer(strips[0], "text")[0]["data"]["values"]
    assert [v["label"] for v in labels] == ["<think>", "</think>"]  # text, drawn as text
    spike = strips[0].data.iloc[int(np.argmax(strips[0].data[B.HIGH]))]  # the lone spike
    assert spike[B.HIGH] >= SPIKE_LOG_RATIO * 0.99


def test_a_strip_holds_no_name_in_its_spec():
    strip = B.strip_charts({"<img src=x>": np.ones(5)}, (0, 5))[0]
    assert strip.name == "<img src=x>" and "<img" not in str(strip.spec)  # the page's text
    assert "expr" not in str(strip.spec) and "signal" not in str(strip.spec)


def test_selection_to_position():
    """A brush's left edge, kept within the response; nothing else names a token."""
    def brushed(*edges: object) -> dict:
        return {B.BRUSH: {B.TOKEN: list(edges)}}

    assert B.position_of(brushed(900.4, 300.2), 1000) == 300  # Vega-Lite's interval
    assert B.position_of(brushed(5e9, 6e9), 1000) == 999
    assert B.position_of(brushed(-4, 10), 1000) == 0
    assert B.position_of(brushed(3, 7), 0) == 0
    for odd in (brushed(), brushed(None, 3), brushed("x", 2), brushed(float("nan"), 2),
                {B.BRUSH: {}}, {}, {"points": [{"x": 812.0}]}, {"box": [{"x": [1, 2]}]}):
        assert B.position_of(odd, 1000) is None, odd


def test_think_marks_also_when_split_over_tokens():
    tokens = ["<", "think", ">", "Ġa", "Ġb", "</think>", "Ġc", "<think", ">"]
    assert B.think_marks(tokens) == [(0, "<think>"), (5, "</think>"), (7, "<think>")]
    assert B.think_marks(["Ġno", "Ġmarks"]) == []


def test_turn_marks_where_a_turn_starts():
    turns = np.array([0, 0, 0, 1, 1, -1, -1, 2, 2])  # -1: outside the conversation
    assert B.turn_marks(turns) == [(3, "turn 1"), (7, "turn 2")]
    assert B.turn_marks(np.repeat(np.arange(100), 3), limit=5) == [
        (3 * k, f"turn {k}") for k in range(1, 6)]
    assert B.turn_marks(np.zeros(1)) == []


# ---- top-K and thresholds -------------------------------------------------------------------

def _brute_force(values: np.ndarray, ranking: P.Ranking, k: int) -> list[int]:
    keyed = []
    for i, v in enumerate(values):
        if not math.isfinite(v) or (ranking.log_magnitude and v <= 0):
            continue
        s = (abs(math.log(v)) if ranking.log_magnitude else abs(v) if ranking.magnitude
             else v if ranking.largest else -v)
        keyed.append((-s, i))
    return [i for _, i in sorted(keyed)[:k]]


@pytest.mark.parametrize("seed", range(6))
def test_top_k_matches_a_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    values = np.round(rng.normal(size=n) * 3, 1)  # rounded: many ties
    values[rng.random(n) < 0.05] = np.nan
    values[rng.random(n) < 0.01] = np.inf
    ratios = np.exp(values / 4)
    for ranking in P.rankings([S.LOG_RATIO, S.K1, S.PROB, "importance_ratio", "entropy"],
                              S.K1).values():
        data = ratios if ranking.log_magnitude else values
        for k in (1, 5, 20, n + 3):
            assert P.top_positions(data, ranking, k).tolist() == _brute_force(data, ranking, k)


def test_rankings_follow_the_sample_and_the_kl_estimator():
    found = P.rankings([S.LOG_RATIO, S.K3, S.PROB, "entropy"], S.K3)
    assert list(found) == ["|log_ratio|", "KL (k3)", "lowest prob", "entropy"]
    assert not found["KL (k3)"].magnitude and found["lowest prob"].largest is False
    assert list(P.rankings([S.LOGPROB], S.K3)) == []


def test_past_threshold_in_order_on_the_ranking_scale():
    values = np.array([0.5, -3.0, np.nan, 2.0, -0.1, 3.0])
    by_size = P.Ranking("|x|", "x", True, magnitude=True)
    assert P.past_positions(values, by_size, 2.0).tolist() == [1, 3, 5]
    lowest = P.Ranking("low", "x", False)
    assert P.past_positions(values, lowest, -0.1).tolist() == [1, 4]


def test_token_rows_give_position_text_value_and_context():
    tokens = ["ĠThe", "Ġcat", "Ċ", "Ġsat", "Ġ<b>", "Ġon"]
    frame = pd.DataFrame({S.TOKEN_INDEX: [10, 11, 12, 13, 14, 15], S.TOKEN: tokens,
                          "k3": [0.0, 0.1, 0.2, 5.0, 0.3, 0.4]})
    rows = P.token_rows(frame, np.array([3]), "k3", T.BYTE_LEVEL)
    assert rows["position"].tolist() == [13]
    assert rows["token"].tolist() == ["·sat"]
    assert rows["k3"].tolist() == [5.0]
    assert rows["context"].tolist() == ["·The·cat↵⟦·sat⟧·<b>·on"]


# ---- token texts ----------------------------------------------------------------------------

def test_byte_level_pieces_are_decoded_and_whitespace_visible():
    tokens = ["ĠWait", "Ċ", "ĉx", "âĢĻ", "Ġ<b>"]
    style = T.token_style(tokens)
    assert style == T.BYTE_LEVEL
    assert [T.shown_token(t, style) for t in tokens] == ["·Wait", "↵", "→x", "’", "·<b>"]
    assert T.decoded("âĢ", style) == "\\xe2\\x80"  # half a character: its bytes


def test_plain_text_keeps_a_real_g_with_dot_above():
    tokens = [" Ġdańsk", "\n"]
    assert T.token_style(tokens) == T.PLAIN
    assert [T.shown_token(t, T.PLAIN) for t in tokens] == ["·Ġdańsk", "↵"]


def test_sentencepiece_pieces():
    tokens = ["▁Wait", "<0x0A>", "▁so"]
    style = T.token_style(tokens)
    assert style == T.SENTENCEPIECE
    assert [T.shown_token(t, style) for t in tokens] == ["·Wait", "↵", "·so"]


def test_a_lone_extreme_last_token_is_drawn_as_a_line_not_only_a_pale_band():
    """The review's D4: a 22,044-token answer's final-token reward (0.95, every other token
    0) was the band's last sliver, 35 % opaque and about a pixel wide: no one saw it.  The
    band's edges are lines, so the bin's max is a stroke of its own."""
    values = np.zeros(22_044)
    values[-1] = 0.95
    strip = B.strip_charts({"token_reward": values}, (0, 256))[0]
    assert strip.data[B.HIGH].iloc[-1] == 0.95 and (strip.data[B.HIGH].iloc[:-1] == 0).all()
    edges = [layer["encoding"]["y"]["field"] for layer in _layer(strip, "line")]
    assert B.HIGH in edges and B.LOW in edges
