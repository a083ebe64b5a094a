"""Names from data in chart labels (Vega-Lite, drawn on a canvas): a title's text or a data
value as written, never a field, an expression or markup."""
import json

import numpy as np
import pandas as pd

from pages.figures import metrics, token_heat, token_strip

NAME = 'he said "<b>hi</b>" & left'


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
