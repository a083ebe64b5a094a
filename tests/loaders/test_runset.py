"""Comparing runs in the data core: prompts matched by id and by text on runs written with
known overlaps, nearest steps, and B − A on common steps with known numbers."""
from __future__ import annotations

import math

import orjson
import pandas as pd
import pytest
from runs_fixtures import write_runs

from loaders import open_run
from loaders import schema as S
from loaders.serve.runset import (
    BY_ID,
    BY_TEXT,
    answers,
    curve_stats,
    match_column,
    matched_prompts,
    nearest_step,
    prompt_summary,
    step_difference,
    wall_times,
)

MEAN = S.stat(S.REWARD, "mean")


def _runs(root, names=("base", "ablation", "third")):
    return [open_run(root / name) for name in names]


def _table(runs, steps, how, a=0, b=1):
    column, _ = match_column(runs, how)
    return column, matched_prompts([prompt_summary(r, s, column) for r, s in zip(runs, steps)],
                                   a, b)


def test_nearest_step():
    assert nearest_step([0, 2, 4], 1) == 0  # a tie goes to the earlier step
    assert nearest_step([0, 2, 4], 3) == 2
    assert nearest_step([0, 2, 4], 9) == 4
    assert nearest_step([], 3) is None


@pytest.mark.parametrize("how", [BY_ID, BY_TEXT])
def test_prompts_match_by_id_and_by_normalised_text(tmp_path, how):
    base, ablation = _runs(write_runs(tmp_path), ("base", "ablation"))
    column, table = _table([base, ablation], [2, 2], how)
    assert column == ("example_id" if how == BY_ID else S.PROMPT_ID)
    # Q2..Q4 in both; Q1 only in base, Q5 only in the ablation (padding did not split them)
    assert len(table) == 5 and table[S.RUNS_WITH].tolist().count(2) == 3
    by_count = table.set_index(S.run_column(S.SAMPLES, 0), append=True)
    assert len(by_count) == 5
    both = table[table[S.RUNS_WITH] == 2]
    # base Q2 (1, 0) -> ablation (1, 1): +0.5 mean, +0.5 pass; Q3 (0, 0) -> (1, 0): +0.5;
    # Q4 (1, 1) -> (0, 0): -1
    deltas = sorted(both[S.run_column(MEAN, S.DELTA)].tolist())
    assert deltas == [-1.0, 0.5, 0.5]
    assert sorted(both[S.run_column(S.PASS_RATE, S.DELTA)].tolist()) == [-1.0, 0.5, 0.5]
    only = table[table[S.RUNS_WITH] == 1]
    assert sorted(only[S.run_column(S.SAMPLES, 0)].tolist()) == [0, 2]
    assert only[S.run_column(MEAN, S.DELTA)].isna().all()


def test_text_does_not_match_prompts_rewritten_with_a_system_prompt_but_ids_do(tmp_path):
    base, ablation = _runs(write_runs(tmp_path, with_id_only=True), ("base", "ablation"))
    _, by_text = _table([base, ablation], [2, 2], BY_TEXT)
    assert (by_text[S.RUNS_WITH] == 2).sum() == 0 and len(by_text) == 8
    _, by_id = _table([base, ablation], [2, 2], BY_ID)
    assert (by_id[S.RUNS_WITH] == 2).sum() == 3


def test_auto_falls_back_to_text_when_a_run_has_no_id(tmp_path):
    runs = _runs(write_runs(tmp_path))
    column, described = match_column(runs)
    assert column == S.PROMPT_ID and "prompt text" in described
    assert match_column(runs[:2])[0] == "example_id"
    _, table = _table(runs, [2, 2, 2], BY_TEXT, a=0, b=2)
    third = table[S.run_column(MEAN, 2)].dropna()
    assert sorted(third.tolist()) == [0.5, 0.5, 0.5] and table[S.RUNS_WITH].max() == 3


def test_answers_of_one_prompt_best_first(tmp_path):
    base, ablation = _runs(write_runs(tmp_path), ("base", "ablation"))
    column, table = _table([base, ablation], [1, nearest_step(ablation.steps, 1)], BY_ID)
    rows = answers(ablation, 0, column, "3")
    assert rows[S.REWARD].tolist() == [1.0, 0.0] and set(rows[S.STEP]) == {0}
    assert "3" in table.index


def test_step_difference_on_common_steps_with_known_numbers():
    a = pd.DataFrame({MEAN: [0.1, 0.2, 0.3, 0.4]}, index=pd.Index([0, 1, 2, 3], name=S.STEP))
    b = pd.DataFrame({MEAN: [0.5, 0.25, math.nan, 1.0]},
                     index=pd.Index([1, 2, 3, 5], name=S.STEP))
    diff = step_difference(a, b, MEAN)
    assert diff.index.tolist() == [1, 2]  # 3 has no value in B, 0 and 5 are in one run only
    assert diff["a"].tolist() == [0.2, 0.3] and diff["b"].tolist() == [0.5, 0.25]
    assert diff[S.DELTA].round(12).tolist() == [0.3, -0.05]
    assert step_difference(a, b, "missing").empty


def test_step_difference_of_real_runs(tmp_path):
    base, ablation = _runs(write_runs(tmp_path), ("base", "ablation"))
    diff = step_difference(base.step_stats, ablation.step_stats, MEAN)
    assert diff.index.tolist() == [0, 2]
    # base: (1+0+1+0+0+0+1+1)/8 = 0.5; ablation: (1+1+1+0+0+0+1+0)/8 = 0.5
    assert diff[S.DELTA].tolist() == [0.0, 0.0]


def test_curve_stats_agree_with_the_single_run_step_stats(tmp_path):
    run = open_run(write_runs(tmp_path) / "ablation")
    curves, full = curve_stats(run), run.step_stats
    assert curves.index.tolist() == full.index.tolist() == [0, 2, 4]
    for column in (MEAN, S.stat(S.REWARD, "std"), S.stat(S.RESPONSE_LEN, "mean"),
                   S.stat(S.kl_mean(S.K3), "mean"), S.WIN_RATE, S.SAMPLES):
        pd.testing.assert_series_equal(curves[column], full[column], check_names=False)
    assert curve_stats(run) is curves  # kept with the run


def test_wall_times_from_the_runs_metrics_when_logged(tmp_path):
    root = write_runs(tmp_path)
    assert wall_times(open_run(root / "base")) is None  # no metrics: the x axis stays steps
    lines = [{"step": step, "time": 1000.0 + 60 * step, "loss": 1.0 / (step + 1)}
             for step in range(3)]
    (root / "base" / "metrics.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n"
                                                           for x in lines))
    times = wall_times(open_run(root / "base"))
    assert times is not None and times.to_dict() == {0: 1000.0, 1: 1060.0, 2: 1120.0}
