"""Token view builders on a real sample: padding, metrics, windows, heatmap, table, inline HTML."""
import html
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from pages.figures import tokens as K
from pages.figures.token_text import IDS

PAD = "<PAD>"
IMG = "<img src=x onerror=alert(1)>"
TOKENS = [" Hi", PAD, "<b>", "\n", IMG, "\tx", " end", PAD]
LP = [-1.0, -0.5, -2.0, -0.1, -0.3, -1.5, -0.7, -0.9]
REF = [-0.5, -0.5, -1.0, -0.4, -0.3, -2.0, -0.2, -0.1]
VALUES = [0.1, 0.2, 0.3, None, 0.5, 0.6, 0.7, 0.8]
TOKEN_REWARDS = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]
ENTROPY = [0.5, 0.0, 1.0, 2.0, 0.1, 0.3, 0.4, 0.0]
KEPT = [0, 2, 3, 4, 5, 6]  # positions of the non-pad tokens
# labels of the kept tokens, whitespace made visible by hand
LABELS = ["0:·Hi", "2:<b>", "3:↵", f"4:{IMG.replace(' ', '·')}", "5:→x", "6:·end"]


def _run(tmp_path: Path, samples: list[dict]):
    return open_run(write_dump(tmp_path / "run" / "r.jsonl", samples).parent, use_cache=False)


@pytest.fixture
def frame(tmp_path) -> pd.DataFrame:
    """The token frame of a real sample, as the sample page gets it."""
    sample = make_sample(0, n=8, response="".join(TOKENS), response_tokens=TOKENS,
                         logprobs=LP, ref_logprobs=REF, values=VALUES,
                         token_rewards=TOKEN_REWARDS, entropy=ENTROPY)
    return _run(tmp_path, [sample]).sample("r.jsonl:1").tokens


@pytest.fixture
def unpadded(frame) -> pd.DataFrame:
    return K.drop_padding(frame, PAD)


def _kept(values: list) -> np.ndarray:
    return np.array([np.nan if values[i] is None else values[i] for i in KEPT], dtype=float)


# ---- padding, metrics, windows ------------------------------------------------------------

def test_drop_padding_keeps_original_indices(frame, unpadded):
    assert frame[S.TOKEN].tolist() == TOKENS
    assert unpadded[S.TOKEN].tolist() == [TOKENS[i] for i in KEPT]
    assert unpadded[S.TOKEN_INDEX].tolist() == KEPT
    np.testing.assert_allclose(unpadded[S.LOGPROB], _kept(LP))
    np.testing.assert_allclose(unpadded["entropy"], _kept(ENTROPY))


def test_drop_padding_without_pad_setting_or_tokens(frame):
    assert K.drop_padding(frame, "") is frame
    assert K.drop_padding(frame, "<never>")[S.TOKEN].tolist() == TOKENS
    empty = frame.iloc[0:0]
    assert K.drop_padding(empty, PAD).empty


def test_token_metrics_full_sample(unpadded):
    # every schema metric has data, then the extra array
    assert K.token_metrics(unpadded) == list(S.TOKEN_METRICS) + ["entropy"]


def test_token_metrics_only_those_with_data(tmp_path):
    sample = {"step": 0, "response_tokens": ["a", "b", "c"], "logprobs": [-0.1, -0.2, -0.3],
              "entropy": [1.0, 2.0, 3.0], "advantages": [0.5, None, -0.5],
              "all_null": [None, None, None], "reward": 1.0}
    tokens = _run(tmp_path, [sample]).sample("r.jsonl:1").tokens
    # no ref_logprobs: no log_ratio, KL or ref_prob; no values or token_rewards
    assert K.token_metrics(tokens) == [S.LOGPROB, S.PROB, "entropy", "advantages"]


def test_window_slices_rows(tmp_path):
    n = 300
    sample = make_sample(0, n=n, seed=3)
    tokens = _run(tmp_path, [sample]).sample("r.jsonl:1").tokens
    assert K.WINDOW == 256
    assert K.window(tokens, 0, width=128)[S.TOKEN_INDEX].tolist() == list(range(128))
    assert K.window(tokens, 128, width=128)[S.TOKEN_INDEX].tolist() == list(range(128, 256))
    assert K.window(tokens, 250)[S.TOKEN_INDEX].tolist() == list(range(250, n))
    assert K.window(tokens, -7, width=3)[S.TOKEN_INDEX].tolist() == [0, 1, 2]
    assert K.window(tokens, n).empty
    np.testing.assert_allclose(K.window(tokens, 10, width=5)[S.LOGPROB], sample["logprobs"][10:15])


def test_window_of_unpadded_frame_counts_rows_not_indices(unpadded):
    part = K.window(unpadded, 1, width=2)
    assert part[S.TOKEN_INDEX].tolist() == [2, 3]


# ---- table --------------------------------------------------------------------------------

def test_metrics_table_one_row_per_token(unpadded):
    metrics = [S.LOGPROB, "entropy", S.VALUE]
    table = K.metrics_table(unpadded, metrics)
    assert list(table.columns) == ["position", "token", *metrics]
    assert table["position"].tolist() == KEPT
    assert table["token"].tolist() == [label.split(":", 1)[1] for label in LABELS]
    np.testing.assert_allclose(table[S.LOGPROB], _kept(LP))
    np.testing.assert_allclose(table["entropy"], _kept(ENTROPY))
    np.testing.assert_allclose(table[S.VALUE], _kept(VALUES))


# ---- inline coloured text -----------------------------------------------------------------

class _Spans(HTMLParser):
    """Each token span's attributes and text, and whether a <br> follows it."""

    def __init__(self) -> None:
        super().__init__()
        self.spans: list[dict] = []
        self._open = False

    def handle_starttag(self, tag, attrs):
        if tag == "span":
            self.spans.append({**dict(attrs), "text": "", "br": False})
            self._open = True
        elif tag == "br":
            self.spans[-1]["br"] = True

    def handle_endtag(self, tag):
        if tag == "span":
            self._open = False

    def handle_data(self, data):
        if self._open:
            self.spans[-1]["text"] += data


def _spans(markup: str) -> list[dict]:
    parser = _Spans()
    parser.feed(markup)
    return parser.spans


def _title_values(title: str) -> dict[str, float]:
    return {m: float(v) for m, v in re.findall(r"([\w]+)=(\S+)", title)}


def _background(span: dict) -> str:
    return re.search(r"background:([^;]+)", span["style"]).group(1)


def _rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def test_inline_html_one_escaped_span_per_token(unpadded):
    metrics = K.token_metrics(unpadded)
    markup = K.inline_html(unpadded, S.LOG_RATIO, metrics)
    assert "<img" not in markup and "<b>" not in markup
    assert html.escape(IMG.replace(" ", "·")) in markup and "&lt;b&gt;" in markup
    assert markup.count("<span") == len(KEPT)
    spans = _spans(markup)
    assert [s["class"] for s in spans] == ["tok"] * len(KEPT)
    expected_text = [TOKENS[i].replace(" ", "·").replace("\t", "→").replace("\n", "↵")
                     for i in KEPT]
    assert [s["text"] for s in spans] == expected_text


def test_a_token_of_60000_characters_is_cut_in_the_window_and_its_table(tmp_path):
    """A dump's token of 60,000 characters made the coloured window 14,000 px tall: each
    token shows at most TOKEN_CHARS characters, its start and end, and how many are left
    out (its tokens' count and the response are untouched)."""
    from pages.figures.token_text import TOKEN_CHARS

    long = "ab" * 30_000
    tokens = [" Hi", long, " end"]
    sample = make_sample(0, n=3, response="".join(tokens), response_tokens=tokens)
    frame = _run(tmp_path, [sample]).sample("r.jsonl:1").tokens
    assert frame[S.TOKEN].tolist() == tokens
    spans = _spans(K.inline_html(frame, S.LOG_RATIO, K.token_metrics(frame)))
    shown = spans[1]["text"]
    assert len(shown) < TOKEN_CHARS + 30 and "59,840 chars" in shown
    assert shown.startswith("abab") and shown.endswith("abab")
    table = K.metrics_table(frame, [S.LOGPROB])
    assert table["token"].tolist()[0::2] == ["·Hi", "·end"] and table["token"][1] == shown


def test_inline_html_newline_token_breaks_the_line(unpadded):
    markup = K.inline_html(unpadded, S.LOG_RATIO, [S.LOG_RATIO])
    spans = _spans(markup)
    assert [s["br"] for s in spans] == ["\n" in TOKENS[i] for i in KEPT]
    assert markup.count("<br>") == 1
    assert "↵</span><br>" in markup


def test_inline_html_title_holds_every_metric(unpadded):
    metrics = K.token_metrics(unpadded)
    spans = _spans(K.inline_html(unpadded, S.LOG_RATIO, metrics))
    lp, ref, values = _kept(LP), _kept(REF), _kept(VALUES)
    for j, (i, span) in enumerate(zip(KEPT, spans)):
        title = span["title"]
        assert title.startswith(f"#{i} ")
        found = _title_values(title)
        assert list(found) == metrics
        r = lp[j] - ref[j]
        expected = {S.LOGPROB: lp[j], S.REF_LOGPROB: ref[j], S.LOG_RATIO: r, S.K1: r,
                    S.K2: r * r / 2, S.K3: math.exp(-r) - 1 + r,
                    S.K3_REVERSE: math.exp(r) - 1 - r, S.VALUE: values[j],
                    S.TOKEN_REWARD: TOKEN_REWARDS[i], S.PROB: math.exp(lp[j]),
                    S.REF_PROB: math.exp(ref[j]), "entropy": ENTROPY[i]}
        for metric, value in expected.items():
            if math.isnan(value):
                assert math.isnan(found[metric]), (metric, title)
            else:
                assert found[metric] == pytest.approx(value, rel=1e-3, abs=1e-4), (metric, title)


def test_inline_html_escapes_metric_names_in_title(tmp_path):
    sample = make_sample(0, n=2, response_tokens=["a", "b"], **{'x"><script>': [1.0, 2.0]})
    tokens = _run(tmp_path, [sample]).sample("r.jsonl:1").tokens
    markup = K.inline_html(tokens, S.LOGPROB, K.token_metrics(tokens))
    assert "<script" not in markup
    assert all('x"><script>=' in s["title"] for s in _spans(markup))


def test_inline_html_nan_is_grey(unpadded):
    spans = _spans(K.inline_html(unpadded, S.VALUE, [S.VALUE]))
    colours = [_background(s) for s in spans]
    assert colours[KEPT.index(3)] == "#bbbbbb"  # the token whose value is null
    assert all(c != "#bbbbbb" for j, c in enumerate(colours) if j != KEPT.index(3))
    assert "value=nan" in spans[KEPT.index(3)]["title"]


def _heat(colour: str) -> int:
    """How far a background is from white (0 for white)."""
    return sum(255 - c for c in _rgb(colour))


def test_inline_html_signed_metric_red_positive_blue_negative(unpadded):
    spans = _spans(K.inline_html(unpadded, S.LOG_RATIO, [S.LOG_RATIO]))
    log_ratio = _kept(LP) - _kept(REF)  # [-0.5, -1.0, 0.3, 0.0, 0.5, -0.5]
    assert log_ratio.min() < 0 < log_ratio.max()
    for r, span in zip(log_ratio, spans):
        red, _, blue = _rgb(_background(span))
        if r > 0:
            assert red > blue
        elif r < 0:
            assert blue > red
        else:
            assert _background(span) == "#ffffff"
    heat = [_heat(_background(s)) for s in spans]
    assert heat[1] > heat[0]  # -1.0 vs -0.5
    assert heat[4] > heat[2]  # 0.5 vs 0.3
    assert heat[0] == heat[5]  # same value, same colour


def test_inline_html_low_logprob_is_hottest_on_a_fixed_scale(unpadded):
    """Lower logprob, hotter colour; the colour of a value does not depend on the other
    tokens shown (the old scale started at the sample's minimum, so the rarest was palest)."""
    spans = _spans(K.inline_html(unpadded, S.LOGPROB, [S.LOGPROB]))
    lp = _kept(LP)
    heat = np.array([_heat(_background(s)) for s in spans])
    assert heat[np.argmin(lp)] == heat.max() > 0
    assert np.all(np.diff(heat[np.argsort(-lp)]) > 0)  # strictly hotter as logprob falls
    alone = _spans(K.inline_html(unpadded.iloc[[0]], S.LOGPROB, [S.LOGPROB]))
    assert _background(alone[0]) == _background(spans[0])


def test_inline_html_text_colour_contrasts_with_every_background(unpadded):
    from pages.figures.token_colours import contrast
    for metric in K.token_metrics(unpadded):
        for span in _spans(K.inline_html(unpadded, metric, [metric])):
            text = re.search(r"(?<![-\w])color:([^;]+)", span["style"]).group(1)
            assert contrast(_rgb(_background(span)), _rgb(text)) >= 4.5, (metric, span)


def test_inline_html_metric_without_column_is_uncoloured(unpadded):
    spans = _spans(K.inline_html(unpadded, "missing", [S.LOGPROB]))
    assert len(spans) == len(KEPT)
    assert all(_background(s) == "transparent" for s in spans)


def test_inline_html_keeps_tokens_whole_and_sets_ids_apart(unpadded):
    markup = K.inline_html(unpadded, S.LOGPROB, [S.LOGPROB])
    assert "break-all" not in markup
    assert all("display:inline-block" in s["style"] and "margin-right" not in s["style"]
               for s in _spans(markup))
    ids = _spans(K.inline_html(unpadded, S.LOGPROB, [S.LOGPROB], style=IDS))
    assert all("margin-right:0.6ch" in s["style"] for s in ids)


def test_default_metrics_never_empty_when_the_sample_has_one():
    kl = S.K3
    assert K.default_metrics([S.LOGPROB, S.LOG_RATIO, S.K3], kl) == [S.LOG_RATIO, S.K3]
    nemo = [S.LOGPROB, S.PROB, "inference_logprobs", "mismatch_kl", "advantages"]
    assert K.default_metrics(nemo, kl) == [S.LOGPROB, "mismatch_kl"]
    assert K.default_metrics(["odd"], kl) == ["odd"]
    assert K.default_metrics([], kl) == []
    assert nemo[K.default_colour(nemo)] == S.LOGPROB
    assert K.default_colour(["odd", S.LOG_RATIO]) == 1
