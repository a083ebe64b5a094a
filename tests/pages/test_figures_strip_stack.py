"""The token strips as one chart: each strip a view of its own rows, its metric's name a
title (text, never an expression), and one brush over every view."""
from __future__ import annotations

import json

import numpy as np

from pages.figures import strip_stack
from pages.figures import token_strip as B

NAME = 'say "<b>hi</b>" & go'


def _stack(columns: dict[str, np.ndarray]) -> tuple:
    strips = B.strip_charts(columns, (2, 6), [(3, "<think>")], {"k3": np.array([1, 4])})
    return strips, *strip_stack.stacked(strips)


def test_each_strip_is_a_view_of_its_own_rows():
    columns = {"log_ratio": np.arange(10.0), "k3": np.ones(10) * 2, NAME: np.zeros(10)}
    strips, data, spec = _stack(columns)
    assert len(spec["vconcat"]) == 3 and len(data) == sum(len(s.data) for s in strips)
    for i, (strip, view) in enumerate(zip(strips, spec["vconcat"])):
        mine = data[data[strip_stack.STRIP] == i].drop(columns=strip_stack.STRIP)
        assert mine.reset_index(drop=True).equals(strip.data)
        assert view["transform"] == [{"filter": {"field": strip_stack.STRIP, "equal": i}}]
        assert view["title"]["text"] == strip.name  # verbatim: drawn as text
        assert len(view["layer"]) == len(strip.spec["layer"])
    assert [v["title"]["text"] for v in spec["vconcat"]] == list(columns)


def test_one_brush_over_every_strip_and_no_name_in_an_expression():
    strips, _, spec = _stack({NAME: np.arange(5.0), "k3": np.arange(5.0)})
    (brush,) = spec["params"]
    assert brush["name"] == B.BRUSH and brush["select"]["type"] == "interval"
    bands = [layer.get("name") for view in spec["vconcat"] for layer in view["layer"]]
    assert sorted(b for b in bands if b) == sorted(brush["views"]) and len(brush["views"]) == 2
    assert not any("params" in layer for view in spec["vconcat"] for layer in view["layer"])
    text = json.dumps(spec)
    assert "expr" not in text and "signal" not in text
    titles = json.dumps([view["title"] for view in spec["vconcat"]])
    assert text.count(json.dumps(NAME)[1:-1]) == titles.count(json.dumps(NAME)[1:-1]) == 1


def test_the_stack_fits_the_page_width_on_a_canvas():
    _, _, spec = _stack({"k3": np.arange(6.0)})
    assert spec["autosize"]["type"] == "fit-x"
    assert spec["usermeta"]["embedOptions"]["renderer"] == "canvas"
    assert all(view["height"] == strip_stack.PLOT_PX for view in spec["vconcat"])
