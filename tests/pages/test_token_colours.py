"""Fixed token colour scales: one per metric, their directions, the per-sample option, the
legend, and WCAG contrast of the token text over the whole range of every map."""
import re
from html.parser import HTMLParser

import numpy as np
import pytest

from loaders import schema as S
from pages.figures import token_colours as C


def _rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def _cells(values, scale) -> list[tuple[tuple, tuple]]:
    """(background, text colour) of each value, read back from the styles."""
    out = []
    for style in C.cell_styles(np.asarray(values, dtype=float), scale):
        found = dict(part.split(":", 1) for part in style.split(";"))
        out.append((_rgb(found["background"]), _rgb(found["color"])))
    return out


def _heat(colour: tuple) -> int:
    return sum(255 - c for c in colour)


def test_every_schema_metric_has_a_fixed_scale():
    assert set(S.TOKEN_METRICS) <= set(C.SCALES)
    assert C.scale_for("some_extra_array", np.array([5.0, 9.0])) == C.DEFAULT
    for scale in (*C.SCALES.values(), C.DEFAULT):
        assert scale.hot != scale.cold and scale.words
        if scale.diverging:
            assert scale.cold == 0 < scale.hot


def test_wcag_contrast_formula_on_known_pairs():
    assert C.contrast(C.BLACK, C.WHITE) == pytest.approx(21.0)
    assert C.contrast((119, 119, 119), C.WHITE) == pytest.approx(4.48, abs=0.01)
    assert C.contrast((118, 118, 118), C.WHITE) == pytest.approx(4.54, abs=0.01)
    assert C.luminance((255, 0, 0)) == pytest.approx(0.2126)


@pytest.mark.parametrize("metric", [*C.SCALES, "unknown"])
def test_text_contrast_at_least_4_5_over_the_whole_map(metric):
    scale = C.scale_for(metric, np.zeros(1))
    span = abs(scale.hot - scale.cold)
    low = scale.cold - span if scale.diverging else min(scale.cold, scale.hot)
    values = np.linspace(low - span, max(scale.cold, scale.hot) + span, 4001)
    ratios = [C.contrast(back, text) for back, text in _cells([*values, np.nan], scale)]
    assert min(ratios) >= 4.5, (metric, min(ratios))
    texts = {text for _, text in _cells(values, scale)}
    assert texts == {C.BLACK, C.WHITE}  # white on the dark end, black on the pale


def test_low_probability_and_logprob_are_hot():
    prob = _cells([1.0, 0.5, 0.1, 0.0], C.SCALES[S.PROB])
    assert prob[0][0] == C.WHITE
    assert [_heat(b) for b, _ in prob] == sorted(_heat(b) for b, _ in prob)
    logprob = _cells([0.0, -0.5, -2.0, -5.0, -50.0], C.SCALES[S.LOGPROB])
    heats = [_heat(b) for b, _ in logprob]
    assert heats[0] == 0 and heats[1] < heats[2] < heats[3] == heats[4]  # clipped at -5


def test_kl_and_entropy_hot_when_large():
    for metric in (S.K2, S.K3, S.K3_REVERSE, "entropy", "mismatch_kl"):
        scale = C.SCALES[metric]
        cells = _cells([0.0, scale.hot / 4, scale.hot, scale.hot * 10], scale)
        heats = [_heat(b) for b, _ in cells]
        assert heats[0] == 0 and heats[1] < heats[2] == heats[3], metric


def test_signed_metrics_diverge_around_zero_symmetrically():
    for metric in (S.LOG_RATIO, S.K1, S.TOKEN_REWARD, S.VALUE, "advantages"):
        scale = C.SCALES[metric]
        h = scale.hot
        (neg, _), (zero, _), (pos, _) = _cells([-h / 2, 0.0, h / 2], scale)
        assert zero == C.WHITE
        assert neg[2] > neg[0] and pos[0] > pos[2]  # blue below, red above
        assert _heat(neg) == pytest.approx(_heat(pos), abs=40)


def test_same_value_same_colour_whatever_else_is_shown():
    scale = C.scale_for(S.LOGPROB, np.array([-0.01, -0.02]))
    other = C.scale_for(S.LOGPROB, np.array([-9.0, -0.02]))
    assert scale == other
    assert C.cell_styles(np.array([-1.0]), scale) == C.cell_styles(np.array([-1.0]), other)


def test_this_sample_scale_puts_the_hot_end_at_the_99th_percentile():
    values = -np.linspace(0, 0.2, 1001)  # a confident sample: logprobs in -0.2..0
    scale = C.scale_for(S.LOGPROB, values, C.SAMPLE)
    assert scale.cold == 0 and scale.hot == pytest.approx(-0.198)
    assert not scale.diverging and scale.words == C.SCALES[S.LOGPROB].words
    signed = C.scale_for(S.LOG_RATIO, np.linspace(-3, 3, 1001), C.SAMPLE)
    assert signed.diverging and signed.hot == pytest.approx(2.97)  # |x| is spread over 0..3
    prob = C.scale_for(S.PROB, np.linspace(0.5, 1, 1001), C.SAMPLE)
    assert prob.cold == 1 and prob.hot == pytest.approx(0.505)  # still hot = unlikely
    assert C.scale_for(S.K3, np.zeros(10), C.SAMPLE) == C.SCALES[S.K3]  # nothing to scale


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text, self.tags = "", []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text = " ".join(f"{self.text} {data}".split())


def test_legend_shows_the_ends_and_direction_and_escapes_the_name():
    name = 'x"<script>alert(1)</script>&'
    parser = _Text()
    parser.feed(C.legend_html(name, C.DEFAULT))
    assert "script" not in parser.tags
    assert name in parser.text and "-1" in parser.text and "red = above 0" in parser.text
    parser = _Text()
    parser.feed(C.legend_html(S.PROB, C.SCALES[S.PROB]))
    assert re.search(r"^1 0 prob · hot = unlikely token · fixed scale", parser.text.strip())
    parser = _Text()
    parser.feed(C.legend_html(S.LOGPROB, C.scale_for(S.LOGPROB, -np.ones(5), C.SAMPLE),
                              C.SAMPLE))
    assert "0 -1 logprob" in parser.text and "99th percentile" in parser.text
