"""Multi-turn trainer formats, written by agent_format_fixtures, through the loaders."""
import math

import agent_format_fixtures as A
import numpy as np
import pytest

from loaders import open_run
from loaders import schema as S


def _run(tmp_path, name):
    return open_run(A.ALL[name](tmp_path / name), use_cache=False)


def _rows(run):
    return run.samples.set_index(S.KEY)


def test_verifiers_episodes_one_sample_per_branch_and_all_only_adds_failures(tmp_path):
    run = _run(tmp_path, "verifiers")
    assert set(run.formats.values()) == {"verifiers"}
    rows = _rows(run)
    first = rows.loc["rollouts/step_0/train/effective/traces.jsonl:1"]
    branch = rows.loc["rollouts/step_0/train/effective/traces.jsonl:1#1"]
    assert (first[S.TURNS], first[S.TOOL_CALLS], first[S.TOOL_NAMES]) == (5, 1, "search")
    assert first[S.LAST_FINISH] == "stop" and branch[S.LAST_FINISH] == "length"
    assert first[S.RESPONSE_LEN] == 5 and first[S.TRAINED_SHARE] == pytest.approx(5 / 13)
    assert first[S.REWARD] == 0.5 and first["reward_format"] == 1.0  # 0 + 1.0 * 0.5
    assert first["advantages_mean"] == 0.5 and math.isnan(first[S.LOG_RATIO_MEAN])
    assert first[S.GROUP_SOURCE] == "group_id" and not first[S.EXCLUDED]
    # `all` repeats the effective episodes: only its failed ones are read, as left out
    from_all = run.samples[run.samples[S.FILE].str.contains("/all/")]
    assert from_all[S.EXCLUDED].all() and set(from_all[S.EXCLUDED_BY]) == {"error"}
    assert len(from_all) == 6  # per step: a failed trace's two branches, a trace-less failure
    assert run.samples[S.VALIDATION].sum() == 2  # the eval episode's two branches
    sample = run.sample("rollouts/step_0/train/effective/traces.jsonl:1")
    tokens = sample.tokens
    assert tokens[S.TOKEN].tolist()[:5] == ["90", "91", "10", "11", "12"]
    np.testing.assert_allclose(tokens[S.LOGPROB].dropna(), [-0.1, -0.2, -0.3, -0.4, -0.5])
    assert tokens[S.TURN].tolist() == [2] * 5 + [3] * 4 + [4] * 4
    assert [t["role"] for t in sample.turns] == ["system", "user", "assistant", "tool",
                                                 "assistant"]
    assert sample.turns[2]["finish_reason"] == "tool_calls"
    assert sample.texts[S.PROMPT] == "[system] Use tools.\n[user] Question 0?"
