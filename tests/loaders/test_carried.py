"""A grown run makes its per-step tables again for the steps the growth touched only, and
they are the tables a run opened afresh makes."""
import pandas as pd
import pytest
from dump_files import line_of, make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.index import steps as steps_module
from loaders.serve import run as run_module
from loaders.serve.grow import grown


@pytest.fixture
def root(tmp_path):
    for rank in range(2):
        write_dump(tmp_path / "run" / f"rollout_data_rank_{rank}.jsonl",
                   [make_sample(step, n=4 + i % 3, seed=rank * 10 + i, prompt=f"q{i % 2}",
                                **({"status": "aborted"} if i == 5 else {}))
                    for step in range(5) for i in range(6)])
    return tmp_path / "run"


def _append(root, samples):
    with open(root / "rollout_data_rank_0.jsonl", "ab") as handle:
        handle.write(b"".join(line_of(s) for s in samples))


def _made_at(monkeypatch) -> list[set[int]]:
    """The steps each step_stats call of a served run makes."""
    calls = []
    def counted(samples):
        calls.append(set(samples[S.STEP].unique().tolist()))
        return steps_module.step_stats(samples)
    monkeypatch.setattr(run_module, "step_stats", counted)
    return calls


@pytest.mark.parametrize("save", [False, True])
def test_a_growth_makes_only_its_steps_again(root, monkeypatch, save):
    run = open_run(root, use_cache=save)
    before = run.trained()
    assert not before.step_stats.empty and before.health().signals is not None
    _append(root, [make_sample(4, n=5, seed=40), make_sample(5, n=4, seed=41)])
    calls = _made_at(monkeypatch)
    after = grown(run, save=save).trained()
    assert after.carried is not None and after.carried.changed == {4, 5}
    stats = after.step_stats
    assert set().union(*calls) == {4, 5}  # steps 0-3 were taken over
    fresh = open_run(root, use_cache=False).trained()
    pd.testing.assert_frame_equal(stats, steps_module.step_stats(fresh.samples))
    pd.testing.assert_frame_equal(after.health().signals, fresh.health().signals)
    assert after.health().alerts == fresh.health().alerts
    assert stats.loc[4, S.SAMPLES] == 11 and stats.loc[5, S.SAMPLES] == 1


def test_a_growth_that_moves_the_length_cap_makes_everything_again(root, monkeypatch):
    run = open_run(root, use_cache=False)
    assert not run.trained().step_stats.empty
    longest = [make_sample(5, n=40, seed=50), make_sample(5, n=40, seed=51)]
    _append(root, longest)  # a new cap: every step's inferred truncation may move
    calls = _made_at(monkeypatch)
    after = grown(run, save=False).trained()
    assert after.carried is None
    pd.testing.assert_frame_equal(after.step_stats, steps_module.step_stats(after.samples))
    assert set().union(*calls) == set(range(6))


def test_a_file_parsed_again_whole_makes_its_old_steps_again(root, monkeypatch):
    run = open_run(root, use_cache=False)
    assert not run.trained().step_stats.empty
    write_dump(root / "rollout_data_rank_1.jsonl",  # rewritten: steps 0-4 gone, step 2 back
               [make_sample(2, n=4 + i % 3, seed=90 + i) for i in range(3)])
    calls = _made_at(monkeypatch)
    after = grown(run, save=False).trained()
    assert after.carried is not None and after.carried.changed == {0, 1, 2, 3, 4}
    pd.testing.assert_frame_equal(after.step_stats, steps_module.step_stats(after.samples))
    assert set().union(*calls) == {0, 1, 2, 3, 4}
