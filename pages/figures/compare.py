"""Pure builders of the RL vs reference page: per-step comparison and prompts RL never beat."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from loaders import schema as S
from loaders.serve.groups import Texts
from pages.figures.rewards import EVEN_COLOR, REF_COLOR, RL_COLOR, WIN_COLOR, win_rate_axis
from pages.figures.smoothing import add_curve, column_values

# ---- per-step table columns -------------------------------------------------------------
RL_REWARD = "RL reward (mean)"
REF_REWARD = "ref reward (mean)"
REWARD_GAP = "reward gap (RL − ref)"
WIN_RATE = "win rate"  # wins / (wins + losses)
TIE_SHARE = "tie share"
RL_TOKENS = "RL length (tokens, mean)"
RL_CHARS = "RL length (chars, mean)"
REF_CHARS = "ref length (chars, mean)"

# ---- never-beaten prompts columns (the prompt id keeps its schema name) ------------------
PROMPT_PREVIEW = "prompt (preview)"
SAMPLE_COUNT = "samples"
STEPS_SEEN = "steps seen"
MEAN_REWARD = "mean reward"
MEAN_REF_REWARD = "mean ref reward"
MEAN_GAP = "mean gap (RL − ref)"
LAST_STEP = "last step"
NEVER_BEATEN_COLUMNS = (S.PROMPT_ID, PROMPT_PREVIEW, SAMPLE_COUNT, STEPS_SEEN, MEAN_REWARD,
                        MEAN_REF_REWARD, MEAN_GAP, LAST_STEP)

SUBPLOT_TITLES = (S.REWARD, "response length (chars)",
                  "win rate = wins / (wins + losses); tie share dotted")


def _mean(stats: pd.DataFrame, column: str) -> np.ndarray:
    return column_values(stats, S.stat(column, "mean"))


def rl_vs_ref_table(stats: pd.DataFrame) -> pd.DataFrame:
    """One row per step, RL next to the reference, for reading exact numbers off the chart."""
    rl, ref = _mean(stats, S.REWARD), _mean(stats, S.REF_REWARD)
    return pd.DataFrame({
        RL_REWARD: rl, REF_REWARD: ref, REWARD_GAP: rl - ref,
        WIN_RATE: column_values(stats, S.WIN_RATE), TIE_SHARE: column_values(stats, S.TIE_SHARE),
        RL_TOKENS: _mean(stats, S.RESPONSE_LEN),
        RL_CHARS: _mean(stats, S.RESPONSE_CHARS), REF_CHARS: _mean(stats, S.REF_RESPONSE_CHARS),
    }, index=stats.index.copy())


def _shows(values: np.ndarray) -> bool:
    """Worth a curve: some finite value that is not 0 (a dump without refs logs 0 chars)."""
    finite = values[np.isfinite(values)]
    return bool(finite.size and np.any(finite != 0))


def rl_vs_ref_figure(stats: pd.DataFrame, smoothing: float = 0.0) -> go.Figure:
    """Reward, response length and win rate stacked on one step axis, RL solid, ref dashed."""
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.07,
                        subplot_titles=SUBPLOT_TITLES)
    x = stats.index.to_numpy()
    pairs = (((S.REWARD, S.REF_REWARD), "reward"), ((S.RESPONSE_CHARS, S.REF_RESPONSE_CHARS),
                                                    "length (chars)"))
    for row, ((rl_column, ref_column), what) in enumerate(pairs, start=1):
        add_curve(fig, x, _mean(stats, rl_column), name=f"RL {what}", color=RL_COLOR,
                  smoothing=smoothing, row=row, col=1)
        ref = _mean(stats, ref_column)
        if _shows(ref):
            add_curve(fig, x, ref, name=f"ref {what}", color=REF_COLOR, dash="dash",
                      smoothing=smoothing, row=row, col=1)
    add_curve(fig, x, column_values(stats, S.WIN_RATE), name=WIN_RATE, color=WIN_COLOR,
              smoothing=smoothing, row=3, col=1)
    add_curve(fig, x, column_values(stats, S.TIE_SHARE), name=TIE_SHARE, color=EVEN_COLOR,
              smoothing=smoothing, dash="dot", row=3, col=1)
    win_rate_axis(fig, row=3, col=1)
    ema_note = f"; EMA {smoothing:g}, raw faint" if smoothing > 0 else ""
    fig.update_layout(height=820, hovermode="x unified", legend={"orientation": "h", "y": -0.08},
                      title=f"RL vs reference per step (means over each step's samples{ema_note})")
    fig.update_xaxes(title_text=S.STEP, row=3, col=1)
    return fig


# every column never_beaten_prompts reads (S.ROW: a row's preview is read by it)
NEVER_BEATEN_READS = (S.ROW, S.STEP, S.PROMPT_ID, S.REWARD, S.REF_REWARD, S.REWARD_GAP)


def never_beaten_prompts(samples: pd.DataFrame, min_steps: int = 2,
                         texts: Texts = lambda rows, *columns, **keys: rows
                         ) -> tuple[pd.DataFrame, int]:
    """(prompts compared with the reference at >= min_steps steps where RL never scored
    higher, worst mean gap first; how many such prompts were left out for being seen at
    fewer steps).  A prompt seen once says nothing about training, and a run that never
    repeats a prompt would list them all.  `texts` gives rows their previews (a served run's
    with_previews), read for one row of each prompt listed."""
    table, left_out = never_beaten_numbers(samples, min_steps)
    rows = samples[samples[S.PROMPT_ID].isin(table[S.PROMPT_ID])].drop_duplicates(S.PROMPT_ID)
    return _previewed(table, texts(rows, (S.PROMPT,), keys=False)), left_out


def never_beaten_numbers(samples: pd.DataFrame, min_steps: int = 2
                         ) -> tuple[pd.DataFrame, int]:
    """never_beaten_prompts without the previews: numbers only (each prompt's first row in
    S.ROW, for its preview), so a served run can keep it beside its index."""
    compared = samples[S.REWARD].notna() & samples[S.REF_REWARD].notna()
    won = samples[S.REWARD] > samples[S.REF_REWARD]
    by_prompt = pd.DataFrame({"compared": compared, "won": won}).groupby(samples[S.PROMPT_ID])
    verdict = by_prompt.any()
    steps = samples[S.STEP].where(compared).groupby(samples[S.PROMPT_ID]).nunique()
    losing = verdict["compared"] & ~verdict["won"]
    never = verdict.index[losing & (steps >= min_steps)]
    left_out = int((losing & (steps < min_steps)).sum())
    rows = samples[samples[S.PROMPT_ID].isin(never)]
    grouped = rows.groupby(S.PROMPT_ID, sort=False)
    first = rows.drop_duplicates(S.PROMPT_ID).set_index(S.PROMPT_ID)
    table = pd.DataFrame({
        **({S.ROW: first[S.ROW]} if S.ROW in first else {}),
        SAMPLE_COUNT: grouped.size(), STEPS_SEEN: grouped[S.STEP].nunique(),
        MEAN_REWARD: grouped[S.REWARD].mean(), MEAN_REF_REWARD: grouped[S.REF_REWARD].mean(),
        MEAN_GAP: grouped[S.REWARD_GAP].mean(), LAST_STEP: grouped[S.STEP].max(),
    }, index=first.index)
    table = table.reset_index().sort_values(MEAN_GAP, kind="stable").reset_index(drop=True)
    return table, left_out


def with_prompt_previews(table: pd.DataFrame, texts: Texts) -> pd.DataFrame:
    """never_beaten_numbers' table (read back, say) with each prompt's preview, read by the
    row it names."""
    return _previewed(table, texts(table[[S.ROW, S.PROMPT_ID]], (S.PROMPT,), keys=False))


def _previewed(table: pd.DataFrame, first: pd.DataFrame) -> pd.DataFrame:
    """table in NEVER_BEATEN_COLUMNS, each prompt's preview from `first` (a row of each
    prompt with its PROMPT)."""
    if table.empty:
        return pd.DataFrame(columns=list(NEVER_BEATEN_COLUMNS))
    previews = first.set_index(S.PROMPT_ID)[S.PROMPT].reindex(table[S.PROMPT_ID])
    out = table.assign(**{PROMPT_PREVIEW: previews.to_numpy()})
    return out[list(NEVER_BEATEN_COLUMNS)]

