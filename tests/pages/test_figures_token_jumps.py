"""The Sample page's jump list: one bar a listed token, in the list's order, as long as what
the ranking sorts by, its label and hover literal text; a click names a rank."""
import json

import numpy as np
import pandas as pd
import pytest

from loaders import schema as S
from pages.figures import ranked_bars as J
from pages.figures import token_jumps
from pages.figures import token_top as top

HOSTILE = "<img src=x onerror=alert(1)>"
TOKENS = ["·Hi", HOSTILE, "↵", "{{x}}", "·end", "a"]
LOG_RATIO = [0.1, -3.0, 2.0, np.nan, 0.5, -0.2]


def _frame() -> pd.DataFrame:
    return pd.DataFrame({S.TOKEN_INDEX: np.arange(len(TOKENS)) + 100, S.TOKEN: TOKENS,
                         S.LOG_RATIO: LOG_RATIO,
                         "importance_ratio": [1.0, 0.25, 2.0, 1.1, 8.0, 0.9]})


def _chart(label: str, k: int = 4):
    frame = _frame()
    ranking = top.rankings(list(frame.columns), S.K3)[label]
    rows = top.top_positions(frame[ranking.column].to_numpy(), ranking, k)
    table = top.token_rows(frame, rows, ranking.column)
    return table, token_jumps.jump_chart(table, ranking)


def test_one_bar_a_token_in_rank_order_as_long_as_the_ranking_sorts_by():
    table, (data, spec) = _chart("|log_ratio|")
    assert data["position"].tolist() == [101, 102, 104, 105]  # |-3| > |2| > 0.5 > |-0.2|
    assert data[J.RANK].tolist() == [0, 1, 2, 3]
    assert data[J.LENGTH].tolist() == [3.0, 2.0, 0.5, 0.2]
    assert data[J.VALUE].tolist() == [-3.0, 2.0, 0.5, -0.2]  # the number keeps its sign
    assert spec["encoding"]["y"]["sort"] is None  # drawn in the list's order
    assert spec["layer"][0]["encoding"]["x"]["title"] == "|log_ratio|"
    low, high = spec["layer"][0]["encoding"]["x"]["scale"]["domain"]
    assert low == 0 and high == pytest.approx(3.0 * 1.25)  # room for the numbers
    assert spec["height"] == {"step": J.ROW_PX}  # the plot grows with its bars


def test_a_ratio_far_from_one_either_way_is_a_long_bar():
    _, (data, spec) = _chart("importance_ratio (far from 1)", k=2)
    assert data["position"].tolist() == [104, 101]  # 8 and 1/4
    assert data[J.LENGTH].tolist() == pytest.approx([np.log(8), np.log(4)])
    assert data[J.VALUE].tolist() == [8.0, 0.25]


def test_token_texts_are_data_never_part_of_the_spec():
    table, (data, spec) = _chart("|log_ratio|", k=6)
    assert f"101 ⟦{HOSTILE.replace(' ', '·')}⟧" in data[J.LABEL].tolist()
    assert any(HOSTILE.replace(" ", "·") in c for c in data["context"])
    text = json.dumps(spec)
    assert "onerror" not in text and "{{x}}" not in text and "⟦" not in text
    assert len(data) == 5  # the NaN token is not listed


def test_a_click_names_a_rank_else_none():
    assert J.rank_of_pick({J.PICK: [{J.RANK: 3}]}) == 3
    assert J.rank_of_pick({J.PICK: [{J.RANK: 3.0}]}) == 3
    for selection in ({}, {J.PICK: []}, {J.PICK: [{}]}, {J.PICK: [{J.RANK: "x"}]},
                      {J.PICK: [{J.RANK: None}]}, {J.PICK: [{J.RANK: float("nan")}]},
                      {J.PICK: [{J.RANK: -1}]}, {J.PICK: "bad"}):
        assert J.rank_of_pick(selection) is None, selection


def test_the_picked_bar_is_coloured_and_every_bar_has_a_hover():
    _, (_, spec) = _chart("|log_ratio|")
    bars, numbers = spec["layer"]
    assert bars["params"][0]["name"] == J.PICK
    assert bars["params"][0]["select"]["fields"] == [J.RANK]
    assert bars["encoding"]["color"]["condition"]["param"] == J.PICK
    fields = [t["field"] for t in bars["encoding"]["tooltip"]]
    assert fields == ["position", "token", J.VALUE, "context"]
    assert numbers["encoding"]["text"] == {"field": J.VALUE, "format": ".4g"}
