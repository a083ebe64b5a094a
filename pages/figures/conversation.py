"""Pure builders of the conversation view: turns -> shown parts, per-turn token metrics.

Nothing here makes HTML: the Streamlit side shows every text with st.text / st.code, which
are literal, so a `<script>` or a Markdown link in a tool output is shown as written.
"""
from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np
import pandas as pd

from loaders import schema as S

Turn = dict  # a turn as loaders.parse.conversation.turn_of makes it (Sample.turns)
TURNS_PER_PAGE = 16  # bubbles on one page of a long agent trajectory (~130 DOM nodes each)
TEXT_LIMIT = 16_000  # characters of one turn shown whole; longer ones show head and tail
SHOW_OPTIONS = ("messages", "tool calls", "tool outputs", "reasoning", "metadata")
_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.DOTALL)
ROLE_ICONS = {"system": ":material/settings:", "user": ":material/person:",
              "assistant": ":material/smart_toy:", "tool": ":material/build:",
              "other": ":material/help:"}


class Part(NamedTuple):
    kind: str  # "text" or "think"
    text: str


def parts_of(text: str) -> list[Part]:
    """A turn's text split into its <think> blocks and the text around them (an unclosed
    <think> runs to the end, as a generation cut by the length cap leaves it)."""
    parts, at = [], 0
    for match in _THINK.finditer(text):
        if match.start() > at and text[at:match.start()].strip():
            parts.append(Part("text", text[at:match.start()]))
        parts.append(Part("think", match.group(1)))
        at = match.end()
    if text[at:].strip() or not parts:
        parts.append(Part("text", text[at:]))
    return parts


def clipped(text: str, limit: int = TEXT_LIMIT) -> str:
    """The text, or its first and last limit/2 characters with the cut said in between."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n\n… {len(text) - 2 * half:,} characters not shown …\n\n{text[-half:]}"


def arguments_shown(call: dict) -> tuple[str, str]:
    """(text, language) of a tool call's arguments: indented JSON when they parse as JSON
    (the loader made it), else as the model wrote them."""
    return (call["pretty"], "json") if call.get("pretty") else (call["arguments"], "text")


def page_of(turns: int, page: int) -> tuple[int, int, int]:
    """(first turn, end, pages) of page `page` (1-based, clamped) of a conversation."""
    pages = max(1, -(-turns // TURNS_PER_PAGE))
    page = min(max(1, page), pages)
    return (page - 1) * TURNS_PER_PAGE, min(turns, page * TURNS_PER_PAGE), pages


METRIC_COLUMNS = ("tokens", "trained", S.LOG_RATIO, "kl", "entropy", "mismatch_kl")


def turn_metrics(tokens: pd.DataFrame, turns: list[Turn], kl: str) -> pd.DataFrame:
    """One row per turn: its tokens, trained tokens, and over the trained tokens of an
    assistant turn the mean log_ratio, KL (the chosen estimator), entropy and mismatch_kl.
    Masked tokens carry NaN metrics (loaders.parse.conversation.mask_untrained), so they
    are in no mean; other roles get no metrics."""
    rows = pd.DataFrame({"turn": range(len(turns)), "role": [t["role"] for t in turns]})
    for column in METRIC_COLUMNS:
        rows[column] = np.nan
    if tokens.empty or S.TURN not in tokens or not (tokens[S.TURN] >= 0).any():
        return rows
    by_turn = tokens[tokens[S.TURN].between(0, len(turns) - 1)].groupby(S.TURN)
    rows.loc[:, "tokens"] = by_turn.size().reindex(rows["turn"]).to_numpy(dtype=float)
    rows.loc[:, "trained"] = by_turn[S.TRAINED].sum().reindex(rows["turn"]).to_numpy(float)
    sources = {S.LOG_RATIO: S.LOG_RATIO, "kl": kl, "entropy": "entropy",
               "mismatch_kl": "mismatch_kl"}
    assistant = rows["role"].eq("assistant").to_numpy()
    for column, source in sources.items():
        if source in tokens:
            means = by_turn[source].mean().reindex(rows["turn"]).to_numpy(dtype=float)
            rows[column] = np.where(assistant, means, np.nan)
    return rows


def metric_line(row: pd.Series, kl: str) -> str:
    """One assistant turn's metrics as a short plain line ("" when there are none)."""
    if row["tokens"] != row["tokens"]:
        return ""
    bits = [f"{int(row['tokens']):,} tokens, {int(row['trained']):,} trained"]
    for column, label in ((S.LOG_RATIO, "log_ratio"), ("kl", f"KL {kl}"),
                          ("entropy", "entropy"), ("mismatch_kl", "mismatch_kl")):
        if row[column] == row[column]:
            bits.append(f"{label} {row[column]:.4g}")
    return " · ".join(bits)


def metadata_line(turn: Turn) -> str:
    """A turn's ids and reasons as one plain line ("" when it has none)."""
    bits = []
    if turn["role"] == "other" and turn["raw_role"]:
        bits.append(f"role {turn['raw_role']}")
    for key, label in (("name", "name"), ("tool_call_id", "answers call"),
                       ("finish_reason", "finish")):
        if turn[key]:
            bits.append(f"{label} {turn[key]}")
    if turn["error"]:
        bits.append("tool error")
    if turn.get("seconds") is not None:  # the model's time, or the tool's
        who = "model" if turn["role"] == "assistant" else turn["role"]
        bits.append(f"{who} {turn['seconds']:.3g} s")
    return " · ".join(bits)


MAX_TURN_BARS = 256  # a longer trajectory is drawn in this many bins of assistant turns


def turn_chart(metrics: pd.DataFrame, kl: str) -> pd.DataFrame | None:
    """Bars per assistant turn (index: its turn number): the mean KL and mismatch_kl over
    its trained tokens; token-weighted bins of turns past MAX_TURN_BARS.  None when fewer
    than two assistant turns have token metrics."""
    rows = metrics[(metrics["role"] == "assistant") & metrics["tokens"].notna()]
    if len(rows) < 2:
        return None
    if len(rows) > MAX_TURN_BARS:  # token-weighted means of runs of turns
        parts = np.array_split(np.arange(len(rows)), MAX_TURN_BARS)
        rows = pd.DataFrame([_binned(rows.iloc[p]) for p in parts])
    chart = pd.DataFrame({f"KL {kl}": rows["kl"].to_numpy(dtype=float),
                          "mismatch_kl": rows["mismatch_kl"].to_numpy(dtype=float)},
                         index=pd.Index(rows["turn"].to_numpy(), name="turn"))
    chart = chart.loc[:, chart.notna().any()]
    return chart if len(chart.columns) else None


def _binned(part: pd.DataFrame) -> dict:
    weights = part["trained"].to_numpy(dtype=float)
    out = {"turn": float(part["turn"].mean()), "tokens": part["tokens"].sum(),
           "trained": weights.sum()}
    for column in (S.LOG_RATIO, "kl", "mismatch_kl"):
        values = part[column].to_numpy(dtype=float)
        ok = np.isfinite(values) & (weights > 0)
        out[column] = float(np.average(values[ok], weights=weights[ok])) if ok.any() else np.nan
    return out
