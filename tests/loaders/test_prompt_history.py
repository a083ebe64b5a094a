"""Prompt history over a run written so that each category has known members."""
import numpy as np
import pandas as pd
import pytest
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.groups.history import previews, prompt_steps, prompt_table
from loaders.groups.table import passed
from loaders.serve.groups import GroupOptions

# pass rates per step 0..3 (four answers each; None: not asked that step)
PLAN = {
    "never": [0, 0, 0, 0],
    "always": [1, 1, 1, 1],
    "regressed": [0.5, 1, 1, 0.25],
    "learning": [0, 0.25, 0.5, 1],
    "once": [None, None, 0.5, None],
    "late": [None, 0.5, None, 0.75],
}


def _samples() -> list[dict]:
    out = []
    for name, rates in PLAN.items():
        for step, rate in enumerate(rates):
            if rate is None:
                continue
            wins = round(rate * 4)
            out += [make_sample(step, seed=i, prompt=f"prompt {name}", reward=float(i < wins))
                    for i in range(4)]
    return out


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    root = tmp_path_factory.mktemp("history")
    run = open_run(write_dump(root / "rollout_data_rank_0.jsonl", _samples()).parent).trained()
    steps, table = run.groups().history()
    return run, steps, table.set_index(S.PROMPT)


def test_categories_have_their_known_members(history):
    _, _, table = history
    members = {flag: sorted(n.removeprefix("prompt ") for n in table.index[table[flag]])
               for flag in S.PROMPT_FLAGS}
    assert members == {"never solved": ["never"], "always solved": ["always"],
                       "regressed": ["regressed"],
                       "stuck at zero variance": ["always", "never"],
                       "learning": ["learning"]}
    assert table.loc["prompt once", S.PROMPT_CATEGORY] == S.SEEN_ONCE
    assert table.loc["prompt late", S.PROMPT_CATEGORY] == "other"


def test_first_solved_last_unsolved_and_trend(history):
    _, _, table = history
    row = table.loc["prompt learning"]
    assert row[S.FIRST_SOLVED] == 3 and row[S.LAST_UNSOLVED] == 0
    assert row[S.PASS_TREND] == pytest.approx(np.polyfit([0, 1, 2, 3], [0, .25, .5, 1], 1)[0])
    assert row[S.STEPS_SEEN] == 4 and row[S.ZERO_VARIANCE_STEPS] == 2  # all 0, all 1
    assert np.isnan(table.loc["prompt never", S.FIRST_SOLVED])
    assert table.loc["prompt regressed", S.FIRST_SOLVED] == 1


def test_one_prompts_history_links_each_step_to_its_group(history):
    run, steps, table = history
    rows = run.with_previews(run.samples)
    prompt = rows.loc[rows[S.PROMPT] == "prompt late", S.PROMPT_ID].iloc[0]
    one = run.groups().prompt(prompt)
    assert one[S.STEP].tolist() == [1, 3]
    assert one[S.PASS_RATE].tolist() == [0.5, 0.75]
    for step, group in zip(one[S.STEP], one[S.GROUP_ID]):
        members = run.groups().members(step, group, GroupOptions())
        assert set(members[S.PROMPT]) == {"prompt late"} and len(members) == 4


def test_history_from_a_frame_matches_a_brute_force_count():
    rng = np.random.default_rng(3)
    n = 5000
    frame = pd.DataFrame({S.PROMPT_ID: rng.integers(0, 50, n), S.STEP: rng.integers(0, 20, n),
                          S.REWARD: rng.integers(0, 2, n).astype(float),
                          S.RESPONSE_LEN: rng.integers(1, 100, n), S.PROMPT: "p"})
    frame[S.GROUP_ID] = frame[S.PROMPT_ID]
    steps = prompt_steps(frame, passed(frame)[0])
    table = prompt_table(steps, previews(frame))
    for pid in (0, 7, 49):
        mine = frame[frame[S.PROMPT_ID] == pid]
        rates = mine.groupby(S.STEP)[S.REWARD].mean()
        assert table.loc[pid, S.STEPS_SEEN] == len(rates)
        solved = rates.index[rates >= 1]
        assert (np.isnan(table.loc[pid, S.FIRST_SOLVED]) if solved.empty
                else table.loc[pid, S.FIRST_SOLVED] == solved.min())
