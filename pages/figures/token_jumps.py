"""The Sample page's jump list: its top tokens (or those past a threshold) as bars whose
click moves the window (ranked_bars).  A bar is as long as what the ranking sorts by
(|log_ratio| for "|log_ratio|"), its number is the token's own value, sign and all, its
label the token's position and text, and the hover adds the tokens around it."""
from __future__ import annotations

import numpy as np
import pandas as pd

from pages.figures.ranked_bars import LABEL, LENGTH, RANK, VALUE, bar_list
from pages.figures.token_top import Ranking, score


def jump_chart(table: pd.DataFrame, ranking: Ranking) -> tuple[pd.DataFrame, dict]:
    """(data, spec) of a bar a row of `table` (token_top.token_rows: position, token, the
    ranking's metric, context), in its order."""
    column = ranking.column
    values = table[column].to_numpy(dtype=np.float64)
    data = pd.DataFrame({RANK: np.arange(len(table)),
                         LABEL: [f"{p} ⟦{t}⟧" for p, t in zip(table["position"].tolist(),
                                                            table["token"].tolist())],
                         LENGTH: _length(values, ranking), VALUE: values,
                         "position": table["position"].to_numpy(),
                         "token": table["token"].to_numpy(), "context": table["context"]})
    tooltip = [{"field": "position", "type": "quantitative", "format": "d"},
               {"field": "token", "type": "nominal"},
               {"field": VALUE, "type": "quantitative", "title": column, "format": ".4g"},
               {"field": "context", "type": "nominal"}]
    title = ranking.label if ranking.magnitude or ranking.log_magnitude else column
    return data, bar_list(data, title, tooltip)


def _length(values: np.ndarray, ranking: Ranking) -> np.ndarray:
    """|value| or |log value| as the ranking scores them; a lowest-first ranking's own value
    (its score, the negated value, would draw every bar leftwards)."""
    return score(values, ranking) if ranking.magnitude or ranking.log_magnitude else values
