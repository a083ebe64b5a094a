"""Pure builders of the conversation view and its filters."""
import math

import pandas as pd

from loaders import schema as S
from pages.figures import conversation as C
from pages.figures import turn_filters as F


def test_think_blocks_split_and_an_unclosed_one_runs_to_the_end():
    assert C.parts_of("a<think>b</think>c") == [C.Part("text", "a"), C.Part("think", "b"),
                                                 C.Part("text", "c")]
    assert C.parts_of("<think>cut by the cap") == [C.Part("think", "cut by the cap")]
    assert C.parts_of("") == [C.Part("text", "")]


def test_long_texts_keep_head_and_tail_and_pages_are_clamped():
    text = "h" * 10_000 + "t" * 10_000
    shown = C.clipped(text)
    assert shown.startswith("h" * 8_000) and shown.endswith("t" * 8_000)
    assert "4,000 characters not shown" in shown
    per = C.TURNS_PER_PAGE
    assert C.page_of(3 * per + 2, 9) == (3 * per, 3 * per + 2, 4)  # clamped to the last
    assert C.page_of(3, 0) == (0, 3, 1)


def test_turn_metrics_average_trained_tokens_of_assistant_turns_only():
    turns = [{"role": r} for r in ("user", "assistant", "tool", "assistant")]
    tokens = pd.DataFrame({S.TURN: [1, 1, 2, 3], S.TRAINED: [True, True, False, True],
                           S.LOG_RATIO: [0.1, 0.3, math.nan, 0.5], S.K3: [1.0, 3.0, math.nan, 5.0],
                           "entropy": [1.0, 1.0, math.nan, 2.0]})
    rows = C.turn_metrics(tokens, turns, S.K3)
    assert rows["tokens"].tolist()[1:] == [2, 1, 1] and rows["trained"].tolist()[1:] == [2, 0, 1]
    assert rows[S.LOG_RATIO].tolist()[1] == 0.2 and math.isnan(rows[S.LOG_RATIO][2])
    assert rows["kl"].tolist()[3] == 5.0 and math.isnan(rows["mismatch_kl"][1])


def test_conversation_mask_by_turns_tools_errors_and_finish():
    rows = pd.DataFrame({S.TURNS: [3.0, 5.0, math.nan], S.TOOL_NAMES: ["a, b", "c", ""],
                         S.TOOL_ERRORS: [0.0, 2.0, math.nan],
                         S.LAST_FINISH: ["stop", "length", "stop"]})
    assert F.conversation_mask(rows, (4, 5), (), "any", ()).tolist() == [False, True, False]
    assert F.conversation_mask(rows, None, ("b",), "any", ()).tolist() == [True, False, False]
    assert F.conversation_mask(rows, None, (), "errors", ()).tolist() == [False, True, False]
    assert F.conversation_mask(rows, None, (), "clean", ("stop",)).tolist() == [True, False,
                                                                                  True]
    assert F.tool_names(rows) == ["a", "b", "c"] and F.finish_reasons(rows) == ["length", "stop"]


def _metrics(n: int) -> pd.DataFrame:
    return pd.DataFrame({"turn": range(n), "role": ["assistant", "tool"] * (n // 2),
                         "tokens": [10.0, 5.0] * (n // 2), "trained": [10.0, 0.0] * (n // 2),
                         S.LOG_RATIO: [0.1, math.nan] * (n // 2),
                         "kl": [0.01, math.nan] * (n // 2),
                         "entropy": [1.0, math.nan] * (n // 2),
                         "mismatch_kl": [math.nan] * n})


def test_turn_chart_bars_assistant_turns_and_bins_long_trajectories():
    chart = C.turn_chart(_metrics(8), S.K3)
    assert list(chart.columns) == ["KL k3"] and chart.index.tolist() == [0, 2, 4, 6]
    assert len(C.turn_chart(_metrics(2_000), S.K3)) == C.MAX_TURN_BARS
    assert C.turn_chart(_metrics(2), S.K3) is None
