"""Pure builders of the Responses page's table: filter, sort, shape."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import regex as regex_engine

from loaders import schema as S
from pages.figures.search import matching
from pages.frame.view import DisplayOptions

TABLE_PREVIEW = 160
PAGE_ROWS = 500  # rows sent to the browser at once: its grid slows to seconds at 8,192
FLAG_LABELS = {S.TRUNCATED: "truncated", S.LENGTH_MISMATCH: "length mismatch",
               S.NONFINITE: "non-finite"}
KEY = S.KEY  # "file:line[#item]", how a table row names its sample
INFERRED = " (inferred from the length cap)"  # a truncation the dump did not state


def sort_choices(estimator: str) -> dict[str, str]:
    """The ready sort choices: label -> summary column."""
    return {
        "reward": S.REWARD, "reward gap (r − ref_r)": S.REWARD_GAP,
        "log_ratio mean": S.LOG_RATIO_MEAN, "log_ratio sum": S.LOG_RATIO_SUM,
        f"KL {estimator} mean": S.kl_mean(estimator), f"KL {estimator} sum": S.kl_sum(estimator),
        "length (tokens)": S.RESPONSE_LEN, "ref_reward": S.REF_REWARD,
        "policy lag": S.POLICY_LAG,
    }


def filter_rows(rows: pd.DataFrame, reward_range: tuple[float, float] | None = None,
                flags: tuple[str, ...] = (), regex: regex_engine.Pattern | None = None,
                texts: dict[str, str] | None = None,
                lag_range: tuple[int, int] | None = None) -> pd.DataFrame:
    """Rows whose reward (and policy lag) is in range, that carry every given flag, and
    whose text matches.

    `texts` maps sample keys to the full prompt+response text searched by `regex`; without it
    the previews are searched.
    """
    keep = np.ones(len(rows), dtype=bool)
    if reward_range is not None:  # a missing reward is in no range: what a histogram bar
        reward = rows[S.REWARD].to_numpy()  # counts (the page asks for none unless narrowed)
        keep &= (reward >= reward_range[0]) & (reward <= reward_range[1])
    if lag_range is not None:  # a sample that names no policy version is not kept then
        lag = rows[S.POLICY_LAG].to_numpy(dtype=float)
        keep &= (lag >= lag_range[0]) & (lag <= lag_range[1])
    for flag in flags:
        keep &= rows[flag].to_numpy(dtype=bool)
    if regex is not None:
        keys = rows[S.KEY].tolist()
        haystack = ([texts.get(k, "") for k in keys] if texts is not None else
                    (rows[S.PROMPT].fillna("") + "\n" + rows[S.RESPONSE].fillna("")).tolist())
        keep &= matching(regex, haystack)  # SearchTooSlow past limits.SEARCH_SECONDS
    return rows[keep]


def page_count(rows: int, size: int = PAGE_ROWS) -> int:
    return max(1, -(-rows // size))


def rows_note(rows: int, page: int, size: int = PAGE_ROWS) -> str:
    """" · rows a–b (page p of n)" of a paged table's page; "" for a table of no rows."""
    if not rows:
        return ""
    pages = page_count(rows, size)
    page = min(max(page, 1), pages)
    return f" · rows {(page - 1) * size + 1:,}–{min(page * size, rows):,} (page {page} of {pages})"


def page_of(rows: pd.DataFrame, page: int, size: int = PAGE_ROWS) -> pd.DataFrame:
    """Rows of the 1-based page (the last page when page is past the end)."""
    page = min(max(page, 1), page_count(len(rows), size))
    return rows.iloc[(page - 1) * size: page * size]


def sort_rows(rows: pd.DataFrame, column: str, descending: bool = True) -> pd.DataFrame:
    """Stable sort on one column, NaN last either way."""
    return rows.sort_values(column, ascending=not descending, na_position="last", kind="stable")


def previews(series: pd.Series, options: DisplayOptions, system: bool = False,
             limit: int = TABLE_PREVIEW) -> list[str]:
    """Table previews, vectorised (8,192 rows a step): the text after the system-prompt
    marker (prompts), without pad tokens, cut at `limit` characters with an ellipsis."""
    text = series.fillna("").astype("string")
    marker = options.system_marker
    if system and marker:
        after = text.str.rsplit(marker, n=1).str[-1].str.lstrip("\n")
        text = text.where(~text.str.contains(marker, regex=False), after)
    if options.pad_token:
        text = text.str.replace(options.pad_token, "", regex=False)
    cut = text.str.slice(0, limit)
    return cut.where(text.str.len() <= limit, cut + "…").fillna("").tolist()


def flag_text(rows: pd.DataFrame) -> list[str]:
    """"truncated, non-finite" and so on per row, vectorised."""
    text = pd.Series("", index=rows.index, dtype="string")
    for flag, label in FLAG_LABELS.items():
        on = rows[flag].to_numpy(dtype=bool)
        text = text.where(~on, text.where(text == "", text + ", ") + label)
        if flag == S.TRUNCATED and S.TRUNCATION_INFERRED in rows:  # the cap's guess, said so
            text = text.where(~rows[S.TRUNCATION_INFERRED].to_numpy(dtype=bool),
                              text + INFERRED)
    return text.tolist()


def table_view(rows: pd.DataFrame, options: DisplayOptions) -> pd.DataFrame:
    """The displayed table: text previews, the metrics, flags, then the extra scalar columns."""
    est = options.kl_estimator
    view = pd.DataFrame({
        KEY: rows[S.KEY].to_numpy(),
        S.PROMPT: previews(rows[S.PROMPT], options, system=True),
        S.RESPONSE: previews(rows[S.RESPONSE], options),
        S.REWARD: rows[S.REWARD].to_numpy(),
        S.GROUND_TRUTH: previews(rows[S.GROUND_TRUTH], options),
        S.LOG_RATIO_MEAN: rows[S.LOG_RATIO_MEAN].to_numpy(),
        S.LOG_RATIO_SUM: rows[S.LOG_RATIO_SUM].to_numpy(),
        S.kl_mean(est): rows[S.kl_mean(est)].to_numpy(),
        S.kl_sum(est): rows[S.kl_sum(est)].to_numpy(),
        S.RESPONSE_LEN: rows[S.RESPONSE_LEN].to_numpy(),
        S.REF_RESPONSE: previews(rows[S.REF_RESPONSE], options),
        S.REF_REWARD: rows[S.REF_REWARD].to_numpy(), S.REWARD_GAP: rows[S.REWARD_GAP].to_numpy(),
        S.POLICY_LAG: rows[S.POLICY_LAG].to_numpy() if S.POLICY_LAG in rows else math.nan,
        "flags": flag_text(rows),
    })
    if S.EXCLUDED_BY in rows and rows[S.EXCLUDED_BY].fillna("").ne("").any():
        view["left out"] = rows[S.EXCLUDED_BY].to_numpy()
    if S.TURNS in rows and rows[S.TURNS].notna().any():  # multi-turn samples at this step
        for column in S.CONVERSATION_COLUMNS:
            view[column] = rows[column].to_numpy()
    for column in extra_columns(rows):
        view[f"extra_{column}" if column in view.columns else column] = rows[column].to_numpy()
    return view


ALWAYS = (KEY, S.PROMPT, S.RESPONSE, S.REWARD)  # shown even when empty


def arranged(view: pd.DataFrame, sort_column: str | None = None) -> pd.DataFrame:
    """The table with the sorted column right after the texts (so it is on screen) and
    the columns that are empty in every row left out (a dump without a reference has no
    use for five columns of blanks)."""
    empty = [c for c in view.columns if c not in ALWAYS and _blank(view[c])]
    view = view.drop(columns=empty)
    if sort_column in view.columns and sort_column not in ALWAYS:
        order = [c for c in view.columns if c != sort_column]
        at = order.index(S.RESPONSE) + 1 if S.RESPONSE in order else len(order)
        view = view[order[:at] + [sort_column] + order[at:]]
    return view


def _blank(column: pd.Series) -> bool:
    if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
        return not column.notna().any()
    return not column.fillna("").astype(str).str.len().gt(0).any()


def extra_columns(rows: pd.DataFrame) -> list[str]:
    """Columns the trainer added beyond the schema, that have at least one value."""
    return [c for c in rows.columns if c not in S.BOARD_COLUMNS and rows[c].notna().any()]
