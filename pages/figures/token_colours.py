"""Fixed colour scales of the inline tokens, one per token metric, and their legend.

A token is coloured on a fixed scale, the same in every window and sample, so a colour means
a value: "hot" (dark red) is where the eye should go.  Sequential metrics run from a cold end
(white) to a hot end; signed ones use a diverging map centred on 0 (blue below, red above)
with a fixed symmetric range.  Values past the ends take the end's colour.  The user may ask
for "this sample" instead: the same direction and cold end, the hot end at the sample's 99th
percentile.  Backgrounds are opaque and the text is black or white, whichever contrasts more
(WCAG: the better of the two is always at least 4.58:1).
"""
from __future__ import annotations

import html
from typing import NamedTuple

import numpy as np

from loaders import schema as S

# the URL holds these as written (a bound segmented control stores its label)
FIXED, SAMPLE = "fixed", "this sample"
SCALE_MODES = (FIXED, SAMPLE)
NAN = "#bbbbbb"
_HOT = ((255, 255, 255), (254, 224, 197), (244, 162, 97), (214, 39, 40), (103, 0, 13))
_DIVERGING = ((33, 102, 172), (146, 197, 222), (255, 255, 255), (244, 165, 130),
              (178, 24, 43))


class Scale(NamedTuple):
    cold: float  # white (sequential) or the centre of a diverging map (always 0 there)
    hot: float  # dark red; a diverging map is red at +hot and blue at -hot
    diverging: bool
    words: str  # the direction, as the legend says it


_UNLIKELY = "unlikely token"
_SIGNED = "red = above 0, blue = below 0"
SCALES: dict[str, Scale] = {
    S.PROB: Scale(1.0, 0.0, False, f"hot = {_UNLIKELY}"),
    S.REF_PROB: Scale(1.0, 0.0, False, "hot = unlikely under the reference"),
    S.LOGPROB: Scale(0.0, -5.0, False, f"hot = {_UNLIKELY}"),
    S.REF_LOGPROB: Scale(0.0, -5.0, False, "hot = unlikely under the reference"),
    "inference_logprobs": Scale(0.0, -5.0, False, f"hot = {_UNLIKELY} (inference engine)"),
    S.LOG_RATIO: Scale(0.0, 1.0, True, "red = policy likes it more than the reference, "
                                       "blue = less"),
    S.K1: Scale(0.0, 1.0, True, "red = policy likes it more than the reference, blue = less"),
    S.K2: Scale(0.0, 0.5, False, "hot = large KL"),
    S.K3: Scale(0.0, 0.5, False, "hot = large KL"),
    S.K3_REVERSE: Scale(0.0, 0.5, False, "hot = large KL"),
    "mismatch_kl": Scale(0.0, 0.1, False, "hot = inference and trainer disagree"),
    "entropy": Scale(0.0, 3.0, False, "hot = uncertain (high entropy)"),
    S.VALUE: Scale(0.0, 1.0, True, _SIGNED),
    S.TOKEN_REWARD: Scale(0.0, 1.0, True, _SIGNED),
    "advantages": Scale(0.0, 2.0, True, _SIGNED),
    "value_error": Scale(0.0, 1.0, True, _SIGNED),
}
DEFAULT = Scale(0.0, 1.0, True, _SIGNED)  # any other array: signed around 0, ±1


def scale_for(metric: str, values: np.ndarray, mode: str = FIXED) -> Scale:
    """The metric's fixed scale, or in SAMPLE mode the same direction with the hot end at
    the 99th percentile of this sample's distance from the cold end."""
    fixed = SCALES.get(metric, DEFAULT)
    if mode != SAMPLE:
        return fixed
    values = np.asarray(values, dtype=float)
    distance = np.abs(values[np.isfinite(values)] - fixed.cold)
    reach = float(np.percentile(distance, 99)) if distance.size else 0.0
    if not reach:
        return fixed
    sign = 1.0 if fixed.hot >= fixed.cold else -1.0
    return fixed._replace(hot=fixed.cold + sign * reach)


def position(values: np.ndarray, scale: Scale) -> np.ndarray:
    """Where each value sits on the map: 0 (cold) .. 1 (hot), or -1 .. 1 when diverging;
    NaN stays NaN."""
    values = np.asarray(values, dtype=float)
    with np.errstate(invalid="ignore"):
        x = (values - scale.cold) / (scale.hot - scale.cold)
        return np.clip(x, -1.0 if scale.diverging else 0.0, 1.0)


def _interpolate(stops: tuple, t: float) -> tuple[int, int, int]:
    at = t * (len(stops) - 1)
    i = min(int(at), len(stops) - 2)
    f = at - i
    return tuple(round(a + (b - a) * f) for a, b in zip(stops[i], stops[i + 1]))


def rgb(x: float, diverging: bool) -> tuple[int, int, int]:
    """The background for a map position (see position)."""
    return _interpolate(_DIVERGING, (x + 1) / 2) if diverging else _interpolate(_HOT, x)


def luminance(colour: tuple[int, int, int]) -> float:
    """WCAG 2 relative luminance of an sRGB colour."""
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
              for c in (v / 255 for v in colour)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG 2 contrast ratio of two colours (1 .. 21)."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


BLACK, WHITE = (0, 0, 0), (255, 255, 255)


def text_colour(background: tuple[int, int, int]) -> tuple[int, int, int]:
    """Black or white, whichever contrasts more with the background."""
    return BLACK if contrast(background, BLACK) >= contrast(background, WHITE) else WHITE


def hex_of(colour: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*colour)


def cell_styles(values: np.ndarray, scale: Scale | None) -> list[str]:
    """`background:..;color:..` of each token (grey for NaN; none without a scale)."""
    if scale is None:
        return ["background:transparent"] * len(values)
    memo: dict[float, str] = {}
    out = []
    for x in position(values, scale):
        if not np.isfinite(x):
            out.append(f"background:{NAN};color:#000000")
            continue
        key = round(float(x), 3)  # ~2,000 distinct colours at most: the eye sees fewer
        if key not in memo:
            back = rgb(key, scale.diverging)
            memo[key] = f"background:{hex_of(back)};color:{hex_of(text_colour(back))}"
        out.append(memo[key])
    return out


def legend_html(metric: str, scale: Scale, mode: str = FIXED) -> str:
    """A small gradient bar with its end values and the direction in words (escaped)."""
    stops = _DIVERGING if scale.diverging else _HOT
    gradient = ", ".join(f"rgb{c}" for c in stops)
    left = -scale.hot if scale.diverging else scale.cold
    where = "this sample's 99th percentile" if mode == SAMPLE else "fixed scale"
    label = html.escape(f"{metric} · {scale.words} · {where}; past the ends: the end colour")
    return ('<div class="tok-legend" style="font-size:0.8em;margin:4px 0">'
            f'<span>{html.escape(f"{left:.3g}")}</span> '
            f'<span style="display:inline-block;width:160px;height:10px;vertical-align:middle;'
            f'border:1px solid #999;background:linear-gradient(to right, {gradient})"></span> '
            f'<span>{html.escape(f"{scale.hot:.3g}")}</span> '
            f'<span style="color:#555">{label}</span></div>')
