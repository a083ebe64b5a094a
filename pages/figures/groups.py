"""Pure builders of the Groups page: the group table, one group's answers, the group mix."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import regex as regex_engine

from loaders import schema as S
from pages.figures.curve_points import kept_points
from pages.figures.search import matching
from pages.figures.step_panels import Panel
from pages.figures.tables import extra_columns, previews
from pages.figures.text import strip_pad, strip_system
from pages.figures.vega import ONE_MARK, titled
from pages.frame.view import DisplayOptions

ID = "id"  # the group id as text: the URL and the table selection carry it
FILTERS = {S.NO_SIGNAL: "no signal", S.ZERO_VARIANCE: "zero variance",
           S.UNDER_TWO_REWARDS: "under two rewards", S.ALL_CORRECT: "all correct",
           S.ALL_WRONG: "all wrong", "mixed": "mixed", S.GROUP_LEFT_OUT: "has left-out answers"}
# the flags a group table row lists (no signal is one of the first two, said by it)
ROW_FLAGS = (S.ZERO_VARIANCE, S.UNDER_TWO_REWARDS, S.ALL_CORRECT, S.ALL_WRONG)
NO_SIGNAL_HELP = ("Groups GRPO learns nothing from: zero variance (two or more finite "
                  "rewards, all equal) or under two rewards (fewer than two finite rewards: "
                  "no reward std, no relative advantage).  NaN and inf rewards are left out "
                  "of a group's reward statistics.")
KIND_COLORS = {"solved": "#2ca02c", "mixed": "#1f77b4", "unsolved": "#d62728"}
PREVIEW = 160
HEAD_TAIL = 600  # characters kept at each end of a collapsed answer
_FINISH = ("finish_reason", "stop_reason")


def sort_choices() -> dict[str, str]:
    """Sort labels -> group table columns."""
    return {"reward mean": S.stat(S.REWARD, "mean"), "reward std": S.stat(S.REWARD, "std"),
            "pass rate": S.PASS_RATE, "size": S.GROUP_SIZE, "rewarded": S.GROUP_REWARDED,
            "length mean": S.stat(S.RESPONSE_LEN, "mean"),
            "length std": S.stat(S.RESPONSE_LEN, "std"), "truncated share": S.TRUNCATED_SHARE,
            "KL mean": S.stat("kl", "mean"), "advantage spread": S.ADVANTAGE_SPREAD,
            "reward min": S.stat(S.REWARD, "min"), "reward max": S.stat(S.REWARD, "max"),
            "left out": S.GROUP_LEFT_OUT}


def filter_groups(table: pd.DataFrame, flags: tuple[str, ...] = (),
                  regex: regex_engine.Pattern | None = None,
                  prompts: dict[int, str] | None = None) -> pd.DataFrame:
    """Groups carrying every chosen flag whose prompt matches the regex: its whole text in
    `prompts` (by group id), else its preview."""
    keep = np.ones(len(table), dtype=bool)
    for flag in flags:
        if flag == "mixed":
            keep &= (table[S.GROUP_KIND] == "mixed").to_numpy()
        elif flag == S.GROUP_LEFT_OUT:
            keep &= (table[S.GROUP_LEFT_OUT] > 0).to_numpy()
        else:
            keep &= table[flag].to_numpy(dtype=bool)
    if regex is not None:
        previews = table[S.PROMPT].fillna("").tolist()
        texts = previews if prompts is None else [
            prompts.get(group, preview) for group, preview in zip(table.index, previews)]
        keep &= matching(regex, texts)
    return table[keep]


def preview(text: str, options: DisplayOptions, system: bool = False,
            limit: int = PREVIEW) -> str:
    text = strip_pad(strip_system(text, options.system_marker) if system else text,
                     options.pad_token)
    return text if len(text) <= limit else text[:limit] + "…"


def group_rows(table: pd.DataFrame, options: DisplayOptions) -> pd.DataFrame:
    """The displayed group table (the group id as text in ID, for the selection)."""
    flags = [", ".join(FILTERS[flag] for flag in ROW_FLAGS if row[flag])
             for row in table[list(ROW_FLAGS)].to_dict("records")]
    shown = pd.DataFrame({
        ID: table.index.astype(str),
        S.PROMPT: previews(table[S.PROMPT], options, system=True),
        S.GROUP_KIND: table[S.GROUP_KIND].to_numpy(), "flags": flags})
    for column in sort_choices().values():
        shown[column] = table[column].to_numpy()
    return shown


def mix_chart(steps: pd.DataFrame, step: int | None = None) -> Panel:
    """Share of solved / mixed / unsolved groups per step (stacked areas), and the
    zero-variance share as a dotted line: the group mix over the run, the chosen step a
    dotted rule (Vega-Lite: the expander opened loads no Plotly script).  A long run keeps
    each bin's extremes of every share, on steps they share (a stack needs them)."""
    kinds = np.select([steps[S.PASS_RATE] >= 1.0, steps[S.PASS_RATE] <= 0.0],
                      ["solved", "unsolved"], "mixed")
    shares = pd.crosstab(steps[S.STEP], kinds, normalize="index").reindex(
        columns=[k for k in KIND_COLORS if k in set(kinds)])
    zero = steps.groupby(S.STEP)[S.ZERO_VARIANCE].mean().reindex(shares.index)
    x = shares.index.to_numpy(np.float64)
    series = {**{k: shares[k].to_numpy(np.float64) for k in shares.columns}, ZERO: zero.to_numpy(
        np.float64)}
    kept = kept_points(list(series.values()))
    data = pd.concat([pd.DataFrame({S.STEP: x[kept], "series": name, "share": values[kept],
                                    "rank": i})  # the stack's order, solved at the bottom
                      for i, (name, values) in enumerate(series.items())], ignore_index=True)
    return Panel(data, _mix_spec(list(series), step))


ZERO = "zero variance"


def _mix_spec(names: list[str], step: int | None) -> dict:
    colour = {"field": "series", "type": "nominal", "title": None, "legend": {"orient": "bottom"},
              "scale": {"domain": names, "range": [KIND_COLORS.get(n, "#000") for n in names]}}
    x = {"field": S.STEP, "type": "quantitative", "title": S.STEP, "scale": {"zero": False},
         "axis": {"format": "d", "tickMinStep": 1}}
    y = {"field": "share", "type": "quantitative", "title": "share of groups",
         "scale": {"domain": [0, 1]}, "axis": {"format": ".0%"}}
    tooltip = [{"field": S.STEP, "type": "quantitative", "format": "d"},
               {"field": "series", "type": "nominal", "title": "of"},
               {"field": "share", "type": "quantitative", "format": ".0%"}]
    layers = [{"transform": [{"filter": {"field": "series", "oneOf": names[:-1]}}],
               "mark": {"type": "area", "opacity": 0.8},
               "encoding": {"x": x, "y": {**y, "stack": "zero"}, "color": colour,
                            "order": {"field": "rank", "type": "quantitative"},
                            "tooltip": tooltip}},
              {"transform": [{"filter": {"field": "series", "equal": ZERO}}],
               "mark": {"type": "line", "strokeDash": [2, 3]},
               "encoding": {"x": x, "y": y, "color": colour, "tooltip": tooltip}}]
    if step is not None:
        layers.append({"data": ONE_MARK, "mark": {"type": "rule", "strokeDash": [2, 2],
                                                  "color": "#666"},
                       "encoding": {"x": {"datum": int(step)}}})
    return {"height": 300, "layer": layers,
            **titled("Group mix per step (share of groups; prompt groups by text)")}


def answers(members: pd.DataFrame, estimator: str) -> pd.DataFrame:
    """One group's answers as displayed: rank by reward, the figures that explain the
    advantage, and the key that opens the answer."""
    finish = next((c for c in _FINISH if c in members and members[c].notna().any()), None)
    table = pd.DataFrame({
        "#": np.arange(1, len(members) + 1), S.REWARD: members[S.REWARD].to_numpy(),
        S.ADVANTAGE: members[S.ADVANTAGE].to_numpy(), S.PASSED: members[S.PASSED].to_numpy(),
        S.RESPONSE_LEN: members[S.RESPONSE_LEN].to_numpy(),
        S.TRUNCATED: members[S.TRUNCATED].to_numpy(),
        f"KL {estimator} mean": members[S.kl_mean(estimator)].to_numpy(),
        "finish": members[finish].astype("string").to_numpy() if finish else "",
        "left out": members[S.EXCLUDED_BY].to_numpy(),
        S.POLICY_LAG: members[S.POLICY_LAG].to_numpy() if S.POLICY_LAG in members else math.nan,
        S.KEY: members[S.KEY].to_numpy()})
    # an on-policy run's answers have no lag: no column of blanks
    return table.drop(columns=S.POLICY_LAG) if table[S.POLICY_LAG].isna().all() else table


def figure(value: float, spec: str) -> str:
    """A number as a card shows it: a missing one (a group of under two rewards has no
    advantage) as "—", never "nan"."""
    return "—" if value is None or math.isnan(value) else format(value, spec)


def answers_caption(count: int, under_two_rewards: bool) -> str:
    """What the answers table shows, and why a group of under two rewards has no
    advantages."""
    said = f"{count} answer{'s' if count != 1 else ''}, best reward first · select a row " \
           "to open it in Sample"
    if under_two_rewards:
        said += (" · under two finite rewards: no reward std and no relative advantage "
                 "(—), so GRPO learns nothing from this group")
    return said


def head_tail(text: str, keep: int = HEAD_TAIL) -> str:
    """A long text collapsed to its head and tail, saying how much is hidden."""
    if len(text) <= 2 * keep + 80:
        return text
    return f"{text[:keep]}\n\n[… {len(text) - 2 * keep:,} characters hidden …]\n\n{text[-keep:]}"


def trainer_columns(members: pd.DataFrame) -> list[str]:
    """The extra scalar columns of these answers (reward parts such as acc, format)."""
    return [c for c in extra_columns(members) if pd.api.types.is_numeric_dtype(members[c])]
