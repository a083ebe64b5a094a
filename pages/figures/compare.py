"""Pure builders of the RL vs reference page: per-step comparison and prompts RL never beat."""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S
from loaders.serve.groups import Texts
from pages.figures.ranked_bars import LABEL, LENGTH, RANK, VALUE, bar_list
from pages.figures.rewards import EVEN_COLOR, REF_COLOR, RL_COLOR, WIN_COLOR
from pages.figures.smoothing import column_values
from pages.figures.step_panels import Curve, Panel, panel
from pages.figures.text import strip_system

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
                  "win rate = wins / (wins + losses); tie share dotted")  # panel titles


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


def rl_vs_ref_panels(stats: pd.DataFrame, smoothing: float = 0.0, step: int | None = None
                     ) -> list[Panel]:
    """Reward, response length and win rate, a panel each on the same steps, RL solid, the
    reference dashed (a reference that logs nothing is left out)."""
    x = stats.index.to_numpy()
    panels = []
    for (rl_column, ref_column), what, title, axis in (
            ((S.REWARD, S.REF_REWARD), "reward", SUBPLOT_TITLES[0], "mean"),
            ((S.RESPONSE_CHARS, S.REF_RESPONSE_CHARS), "length (chars)", SUBPLOT_TITLES[1],
             "chars")):
        curves = [Curve(f"RL {what}", _mean(stats, rl_column), RL_COLOR)]
        ref = _mean(stats, ref_column)
        if _shows(ref):
            curves.append(Curve(f"ref {what}", ref, REF_COLOR, "dash"))
        panels.append(panel(x, curves, title=title, y_title=axis, step=step,
                            smoothing=smoothing))
    rates = [Curve(WIN_RATE, column_values(stats, S.WIN_RATE), WIN_COLOR),
             Curve(TIE_SHARE, column_values(stats, S.TIE_SHARE), EVEN_COLOR, "dot")]
    panels.append(panel(x, rates, title=SUBPLOT_TITLES[2], y_title="share", step=step,
                        smoothing=smoothing, percent=True))
    return panels


def panels_title(smoothing: float) -> str:
    """What the panels show (the plain words above them)."""
    ema_note = f"; EMA {smoothing:g}, raw faint" if smoothing > 0 else ""
    return f"RL vs reference per step (means over each step's samples{ema_note})"


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


def without_system(never: pd.DataFrame, marker: str) -> pd.DataFrame:
    """never_beaten_prompts with each prompt's preview cut after its system-prompt marker,
    as every other page shows a prompt: a bar's label then starts at the question."""
    previews = [strip_system(str(text), marker) for text in never[PROMPT_PREVIEW]]
    return never.assign(**{PROMPT_PREVIEW: previews}) if marker else never


def _previewed(table: pd.DataFrame, first: pd.DataFrame) -> pd.DataFrame:
    """table in NEVER_BEATEN_COLUMNS, each prompt's preview from `first` (a row of each
    prompt with its PROMPT)."""
    if table.empty:
        return pd.DataFrame(columns=list(NEVER_BEATEN_COLUMNS))
    previews = first.set_index(S.PROMPT_ID)[S.PROMPT].reindex(table[S.PROMPT_ID])
    out = table.assign(**{PROMPT_PREVIEW: previews.to_numpy()})
    return out[list(NEVER_BEATEN_COLUMNS)]


NEVER_BARS = 20  # the widest gaps drawn as bars; the whole list is a table on request
PREVIEW_CHARS = 60  # of a prompt, in its bar's label (its hover has the preview)


def never_beaten_bars(never: pd.DataFrame, limit: int = NEVER_BARS
                      ) -> tuple[pd.DataFrame, dict]:
    """(data, spec) of the first `limit` prompts of never_beaten_prompts (worst first) as
    bars as long as RL trails the reference on them (mean ref − RL reward); a prompt's
    rank leads its label, as two prompts can begin alike."""
    shown = never.head(limit)
    trails = -shown[MEAN_GAP].to_numpy(dtype=np.float64)
    labels = [f"{i + 1}. {' '.join(str(text).split())[:PREVIEW_CHARS]}"
              for i, text in enumerate(shown[PROMPT_PREVIEW])]
    data = shown.assign(**{RANK: np.arange(len(shown)), LABEL: labels, LENGTH: trails,
                           VALUE: trails,  # a 64-bit id as text: JavaScript's numbers round it
                           S.PROMPT_ID: shown[S.PROMPT_ID].astype(str)})
    numbers = [{"field": f, "type": "quantitative", "format": ".4g"}
               for f in (MEAN_REWARD, MEAN_REF_REWARD, MEAN_GAP)]
    tooltip = [{"field": S.PROMPT_ID, "type": "nominal"},
               {"field": PROMPT_PREVIEW, "type": "nominal"},
               {"field": SAMPLE_COUNT, "type": "quantitative", "format": ",d"},
               {"field": STEPS_SEEN, "type": "quantitative", "format": ",d"}, *numbers,
               {"field": LAST_STEP, "type": "quantitative", "format": "d"}]
    return data, bar_list(data, "how far RL trails the reference (mean ref − RL reward)",
                          tooltip)
