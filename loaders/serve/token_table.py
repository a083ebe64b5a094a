"""One sample's per-token table, built when a page asks for it."""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.parse import kl, trained_tokens
from loaders.parse.arrays import BadField, aligned_length, float_array, is_number_list


def token_table(obj: dict) -> pd.DataFrame:
    """Rows are tokens (aligned by the rule in loaders.parse.arrays); columns are token metrics.

    Always has index, token and every column of schema.TOKEN_METRICS (NaN when the sample
    lacks the data), plus one column per extra numeric list of the same length or longer.
    """
    n, _ = aligned_length(obj)
    columns: dict[str, np.ndarray | list] = {S.TOKEN_INDEX: np.arange(n)}
    columns[S.TOKEN] = _token_texts(obj.get(S.RESPONSE_TOKENS), n)
    for key, column in S.ARRAY_TO_TOKEN_COLUMN.items():
        columns[column] = _floats(obj.get(key), n)
    with np.errstate(over="ignore", invalid="ignore"):
        log_ratio = columns[S.LOGPROB] - columns[S.REF_LOGPROB]
        columns[S.LOG_RATIO] = log_ratio
        columns[S.PROB] = np.exp(columns[S.LOGPROB])
        columns[S.REF_PROB] = np.exp(columns[S.REF_LOGPROB])
    columns.update(kl.estimate(log_ratio))
    columns.update(extra_arrays(obj, n))
    columns.update(trained_tokens.token_columns(obj, n))
    if S.TRAINED in columns:  # environment tokens: no metrics
        trained_tokens.mask_untrained(columns, columns[S.TRAINED])
    return pd.DataFrame(columns)


def extra_arrays(obj: dict, n: int) -> dict[str, np.ndarray]:
    """Per-token arrays the schema does not name (entropy, advantages, ...), cut to n."""
    found = {}
    for key, value in obj.items():
        if key in S.KNOWN_KEYS or not is_number_list(value) or len(value) < n or n == 0:
            continue
        try:
            found[key] = float_array(value[:n])
        except BadField:
            continue
    return found


def _floats(values: object, n: int) -> np.ndarray:
    if not isinstance(values, list):
        return np.full(n, np.nan)
    try:
        return float_array(values[:n])
    except BadField:
        return np.full(n, np.nan)


def _token_texts(tokens: object, n: int) -> list[str]:
    if not isinstance(tokens, list):
        return [""] * n
    part = tokens[:n]
    if set(map(type, part)) <= {str}:  # the usual case, without a Python loop over 32k
        return part
    return [t if isinstance(t, str) else str(t) for t in part]
