"""RL vs reference builders: the per-step table and figure, never-beaten prompts, length deltas."""
import math

import numpy as np
import pandas as pd
import pytest
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from pages.figures import compare as C


@pytest.fixture
def run(tmp_path):
    samples = [make_sample(step, n=3 + i + step, seed=i, ref_response="r" * (5 + step))
               for step in range(3) for i in range(4)]
    return open_run(write_dump(tmp_path / "run" / "rollout.jsonl", samples).parent), samples


def test_rl_vs_ref_table_matches_the_samples(run):
    loaded, samples = run
    table = C.rl_vs_ref_table(loaded.step_stats)
    raw = pd.DataFrame(samples)
    by_step = raw.groupby(S.STEP)
    assert list(table.columns) == [C.RL_REWARD, C.REF_REWARD, C.REWARD_GAP, C.WIN_RATE,
                                   C.TIE_SHARE, C.RL_TOKENS, C.RL_CHARS, C.REF_CHARS]
    assert list(table.index) == [0, 1, 2]
    np.testing.assert_allclose(table[C.RL_REWARD], by_step[S.REWARD].mean())
    np.testing.assert_allclose(table[C.REF_REWARD], [0.25] * 3)
    np.testing.assert_allclose(table[C.REWARD_GAP], by_step[S.REWARD].mean() - 0.25)
    wins = (raw[S.REWARD] > raw[S.REF_REWARD]).groupby(raw[S.STEP]).sum()
    losses = (raw[S.REWARD] < raw[S.REF_REWARD]).groupby(raw[S.STEP]).sum()
    np.testing.assert_allclose(table[C.WIN_RATE], wins / (wins + losses))
    np.testing.assert_allclose(table[C.RL_TOKENS], [4.5, 5.5, 6.5])
    np.testing.assert_allclose(table[C.RL_CHARS], by_step[S.RESPONSE].apply(
        lambda s: s.str.len().mean()))
    np.testing.assert_allclose(table[C.REF_CHARS], [5, 6, 7])


def test_rl_vs_ref_table_without_columns_is_nan():
    stats = pd.DataFrame({S.stat(S.REWARD, "mean"): [1.0, 2.0]},
                         index=pd.Index([0, 1], name=S.STEP))
    table = C.rl_vs_ref_table(stats)
    np.testing.assert_array_equal(table[C.RL_REWARD], [1.0, 2.0])
    assert table[C.REF_REWARD].isna().all() and table[C.REWARD_GAP].isna().all()


def _series(panel) -> dict[str, np.ndarray]:
    data = panel.data
    return {name: data.loc[data["series"] == name, "value"].to_numpy()
            for name in dict.fromkeys(data["series"])}


def _layers(panel) -> list[dict]:
    return panel.spec["layer"]


def test_rl_vs_ref_panels_share_the_steps_ref_dashed_win_rate_in_percent(run):
    loaded, _ = run
    stats = loaded.step_stats
    panels = C.rl_vs_ref_panels(stats, step=int(stats.index[-1]))
    assert [list(_series(p)) for p in panels] == [
        ["RL reward", "ref reward"], ["RL length (chars)", "ref length (chars)"],
        [C.WIN_RATE, C.TIE_SHARE]]
    for p in panels:  # one step axis: every series a value a step, at the same steps
        for name in _series(p):
            steps = p.data.loc[p.data["series"] == name, "step"].to_numpy()
            np.testing.assert_array_equal(steps, stats.index.to_numpy())
    np.testing.assert_allclose(_series(panels[0])["RL reward"], stats[S.stat(S.REWARD, "mean")])
    np.testing.assert_allclose(_series(panels[2])[C.WIN_RATE], stats[S.WIN_RATE])
    line = _layers(panels[1])[0]
    dashes = line["encoding"]["strokeDash"]["scale"]
    assert dict(zip(dashes["domain"], dashes["range"]))["ref length (chars)"] == [6, 4]
    assert _layers(panels[2])[0]["encoding"]["y"]["axis"]["format"] == ".0%"
    rules = [layer for layer in _layers(panels[0]) if layer["mark"]["type"] == "rule"]
    assert rules[-1]["encoding"]["x"]["datum"] == int(stats.index[-1])  # the chosen step


def test_rl_vs_ref_panels_smoothing_and_missing_refs(run):
    loaded, _ = run
    stats = loaded.step_stats.copy()
    stats[S.stat(S.REF_RESPONSE_CHARS, "mean")] = 0.0  # what a dump without ref texts holds
    stats[S.stat(S.REF_REWARD, "mean")] = np.nan
    panels = C.rl_vs_ref_panels(stats, smoothing=0.5)
    assert list(_series(panels[0])) == ["RL reward"]
    assert list(_series(panels[1])) == ["RL length (chars)"]
    first = panels[0]
    assert _layers(first)[0]["encoding"]["y"]["field"] == "raw"  # the raw curve, faint
    raw = first.data["raw"].to_numpy()
    np.testing.assert_allclose(raw, stats[S.stat(S.REWARD, "mean")])
    assert not np.allclose(first.data["value"].to_numpy()[1:], raw[1:])  # the EMA drawn
    assert "EMA 0.5" in C.panels_title(0.5) and "EMA" not in C.panels_title(0.0)


def test_a_panel_holds_no_text_from_the_dump():
    """Series and titles are the board's words: the spec's strings are fixed ones."""
    from pages.figures.step_panels import Curve, panel

    made = panel(np.arange(3), [Curve("RL reward", np.ones(3), "#1f77b4")], title="reward",
                 y_title="mean", step=1)
    text = str(made.spec)
    assert "expr" not in text and "signal" not in text and "url" not in text


def _summary(rows: list[tuple]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=[S.PROMPT_ID, S.PROMPT, S.STEP, S.REWARD, S.REF_REWARD])
    frame[S.REWARD_GAP] = frame[S.REWARD] - frame[S.REF_REWARD]
    return frame


def test_never_beaten_keeps_only_prompts_rl_always_lost():
    nan = math.nan
    samples = _summary([
        (1, "always loses", 0, 0.1, 0.5),
        (2, "wins once", 0, 0.1, 0.5),
        (3, "no reference", 0, 0.9, nan),
        (1, "always loses", 1, 0.5, 0.5),  # a tie is not a win
        (2, "wins once", 1, 0.6, 0.5),
        (1, "always loses", 3, 0.2, 0.6),
        (3, "no reference", 2, 0.1, nan),
        (1, "always loses", 3, nan, 0.6),  # not compared; still counted as a sample
    ])
    out, once = C.never_beaten_prompts(samples)
    assert list(out.columns) == list(C.NEVER_BEATEN_COLUMNS)
    assert len(out) == 1 and once == 0
    row = out.iloc[0]
    assert row[S.PROMPT_ID] == 1 and row[C.PROMPT_PREVIEW] == "always loses"
    assert row[C.SAMPLE_COUNT] == 4 and row[C.STEPS_SEEN] == 3 and row[C.LAST_STEP] == 3
    assert row[C.MEAN_REWARD] == pytest.approx((0.1 + 0.5 + 0.2) / 3)
    assert row[C.MEAN_REF_REWARD] == pytest.approx((0.5 + 0.5 + 0.6 + 0.6) / 4)
    assert row[C.MEAN_GAP] == pytest.approx((-0.4 + 0.0 - 0.4) / 3)


def test_never_beaten_sorts_worst_first_and_can_be_empty():
    samples = _summary([(7, "slightly behind", 0, 0.4, 0.5), (8, "far behind", 0, 0.0, 0.9),
                        (9, "ahead", 0, 0.9, 0.1), (7, "slightly behind", 1, 0.4, 0.5),
                        (8, "far behind", 1, 0.0, 0.9), (9, "ahead", 1, 0.9, 0.1)])
    assert list(C.never_beaten_prompts(samples)[0][S.PROMPT_ID]) == [8, 7]
    empty, once = C.never_beaten_prompts(samples[samples[S.PROMPT_ID] == 9])
    assert empty.empty and list(empty.columns) == list(C.NEVER_BEATEN_COLUMNS) and once == 0


def test_prompts_compared_at_one_step_are_left_out_and_counted():
    samples = _summary([(1, "once", 0, 0.1, 0.5), (2, "once too", 3, 0.0, 0.5),
                        (3, "twice", 0, 0.1, 0.5), (3, "twice", 1, 0.2, 0.5)])
    out, once = C.never_beaten_prompts(samples)
    assert list(out[S.PROMPT_ID]) == [3] and once == 2
    assert sorted(C.never_beaten_prompts(samples, min_steps=1)[0][S.PROMPT_ID]) == [1, 2, 3]


def test_never_beaten_on_a_real_dump(run):
    loaded, samples = run
    out, once = C.never_beaten_prompts(loaded.samples, texts=loaded.with_previews)
    # every prompt text is unique per (seed, step) here: each was compared at one step only
    losers = sorted(s[S.PROMPT] for s in samples if s[S.REWARD] <= s[S.REF_REWARD])
    assert out.empty and once == len(losers)
    out, _ = C.never_beaten_prompts(loaded.samples, min_steps=1,
                                    texts=loaded.with_previews)
    assert sorted(out[C.PROMPT_PREVIEW]) == losers
    assert (out[C.MEAN_GAP].diff().dropna() >= 0).all()



def test_never_beaten_bars_draw_the_widest_gaps_first_as_literal_text():
    import json

    never = pd.DataFrame({S.PROMPT_ID: [2**62 + 1, 7, 8], C.PROMPT_PREVIEW: [
        "<b>bold</b>\n  and {{x}}", "x" * 200, "same start"], C.SAMPLE_COUNT: [4, 4, 2],
        C.STEPS_SEEN: [2, 2, 2], C.MEAN_REWARD: [0.0, 0.1, 0.2],
        C.MEAN_REF_REWARD: [1.0, 0.5, 0.3], C.MEAN_GAP: [-1.0, -0.4, -0.1],
        C.LAST_STEP: [3, 3, 3]})
    data, spec = C.never_beaten_bars(never, limit=2)
    assert len(data) == 2  # bounded
    assert data["length"].tolist() == [1.0, 0.4]  # how far RL trails
    assert data["label"].tolist() == ["1. <b>bold</b> and {{x}}", "2. " + "x" * C.PREVIEW_CHARS]
    assert data[S.PROMPT_ID].tolist() == [str(2**62 + 1), "7"]  # exact, as text
    text = json.dumps(spec)
    assert "<b>" not in text and "{{x}}" not in text


def test_a_never_beaten_prompts_label_starts_at_its_question_after_the_system_prompt():
    """The review's D3: bars read "You are a helpful assistant.<endofsystem>What is 54…",
    the question cut off; every other page shows a prompt after its system-prompt marker."""
    never = pd.DataFrame({C.PROMPT_PREVIEW: ["Be brief.<endofsystem>What is 54 + 3?",
                                             "No system prompt here"]})
    shown = C.without_system(never, "<endofsystem>")
    assert shown[C.PROMPT_PREVIEW].tolist() == ["What is 54 + 3?", "No system prompt here"]
    assert C.without_system(never, "") is never  # no marker set: as written
