"""Names from data in chart labels: in Plotly's, read back as the literal name under Plotly's
own entity decoding (which knows &amp; &lt; &gt; but not &quot;), never as markup; in
Vega-Lite's, a title's text drawn on the canvas, never a field or an expression."""
import json
import re

import numpy as np
import pandas as pd

from pages.figures import metrics, token_heat, token_strip
from pages.figures.text import plot_text

NAME = 'he said "<b>hi</b>" & left'
# Plotly's pseudo-HTML entity table (src/constants/string_mappings.js) plus numeric entities
_PLOTLY = {"mu": "μ", "amp": "&", "lt": "<", "gt": ">", "nbsp": "\u00a0", "times": "×",
           "plusmn": "±", "deg": "°"}


def plotly_decoded(text: str) -> str:
    """What Plotly draws for a label's text (tags aside)."""
    def one(match: re.Match) -> str:
        body = match.group(1)
        if body.startswith("#x"):
            return chr(int(body[2:], 16))
        if body.startswith("#"):
            return chr(int(body[1:]))
        return _PLOTLY.get(body, match.group(0))
    return re.sub(r"&(#x[0-9a-fA-F]+|#\d+|[a-z]+);", one, text)


def _labels(fig) -> list[str]:
    """Every string in the figure's JSON that mentions the name's first word."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
        elif isinstance(node, str) and "said" in node:
            found.append(node)
    walk(json.loads(fig.to_json()))
    return found


def _assert_literal(fig, expected: int) -> None:
    labels = _labels(fig)
    assert len(labels) >= expected
    for label in labels:
        assert "<b>" not in label and "&quot;" not in label
        assert NAME in plotly_decoded(label), label


def test_plot_text_escapes_only_what_plotly_decodes():
    assert plot_text(NAME) == 'he said "&lt;b&gt;hi&lt;/b&gt;" &amp; left'
    assert plotly_decoded(plot_text(NAME)) == NAME
    assert plot_text("&quot;") == "&amp;quot;"  # a literal entity stays literal
    assert plotly_decoded(plot_text("&quot; &lt;")) == "&quot; &lt;"


def test_strip_names_and_marks_are_data_not_markup():
    strip = token_strip.strip_charts({NAME: np.arange(10.0)}, (0, 4), marks=[(3, NAME)],
                                     hits={NAME: np.array([2])})[0]
    assert strip.name == NAME  # shown by the page as a caption (literal), not in the spec
    texts = [layer for layer in strip.spec["layer"] if layer["mark"]["type"] == "text"]
    assert texts[0]["data"]["values"] == [{"token": 3, "label": NAME}]
    spec = json.dumps(strip.spec)
    assert "expr" not in spec and "signal" not in spec and "href" not in spec


def test_token_heatmap_labels_are_literal():
    heat = token_heat.position_step_chart([0, 1], ["0–3 %"], np.ones((2, 1)),
                                          np.ones((2, 1)), NAME, 1)
    # the name is the title's text, drawn on the canvas as it is; never a tooltip's field
    assert heat.spec["title"]["text"] == f"{NAME} by position (x) and step (y)"
    tooltip = json.dumps(heat.spec["layer"][0]["encoding"]["tooltip"])
    assert NAME not in tooltip and "<" not in tooltip
    spec = json.dumps(heat.spec)
    assert "expr" not in spec and "signal" not in spec and "href" not in spec


def test_metric_chart_title_is_literal_and_never_a_field_or_an_expression():
    frame = pd.DataFrame({NAME: [1.0, 2.0, 3.0]}, index=pd.Index([0, 1, 2], name="step"))
    chart = metrics.metric_chart(frame, NAME, step=1)
    # the name is the title's text, drawn on the canvas as it is (Vega-Lite, no markup)
    assert chart.spec["title"]["text"] == NAME
    layers = json.dumps(chart.spec["layer"])
    assert "he said" not in layers and "<" not in layers
    spec = json.dumps(chart.spec)
    assert "expr" not in spec and "signal" not in spec and "href" not in spec
    assert NAME not in chart.data.columns  # fields are the chart's own names
    empty = metrics.metric_chart(pd.DataFrame({NAME: [np.nan]}, index=[0]), NAME)
    assert empty.spec["title"]["text"] == f"{NAME} (no values)"
