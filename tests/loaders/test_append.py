"""A followed run's growth between saves sorted alone (loaders.index.append): the run it
serves is the one a sort of the whole run serves, row for row and text for text, whether the
growth starts a step, completes one, goes back to an old one, or is one the fast way must
leave to the whole sort (a new extra column, a moved generation cap, a column's type)."""
import pandas as pd
import pytest
from dump_files import keyed, line_of, make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.index import append, refresh
from loaders.serve.grow import grown


def _dump(root, steps=3, files=3):
    for f in range(files):
        write_dump(root / f"rollout_data_rank_{f}.jsonl",
                   [make_sample(s, n=5 + (i * 7 + f) % 11, seed=100 * f + i, uid=f"u{f}{i}",
                                score_b=i / 4)
                    for s in range(steps) for i in range(4)])
    return root


def _grow(root, rows_by_file):
    for f, rows in rows_by_file.items():
        with open(root / f"rollout_data_rank_{f}.jsonl", "ab") as handle:
            handle.write(b"".join(line_of(r) for r in rows))


class _Taken(list):
    """appended as refresh calls it (or None: the whole sort), each result kept."""

    def __init__(self, made) -> None:
        super().__init__()
        self.made = made

    def __call__(self, *args):
        self.append(self.made(*args) if self.made else None)
        return self[-1]


GROWTHS = {
    "a new step in every file": ({f: [make_sample(3, n=6, seed=f, uid="x", score_b=1)] * 2
                                  for f in range(3)}, True),
    "the last step completed by one file": ({1: [make_sample(2, n=4, seed=9, uid="y",
                                                              score_b=2)]}, True),
    "rows of an old step": ({0: [make_sample(0, n=3, seed=7, uid="z", score_b=3)]}, True),
    "rows without a column the run has": ({0: [make_sample(3, n=3, seed=7, uid="v")]},
                                          False),
    "a new extra column": ({2: [make_sample(3, n=4, seed=5, uid="w", score_c=0.5)]}, False),
    "a generation cap the growth makes": ({0: [make_sample(3, n=40, seed=1, uid="c")] * 2},
                                          False),
    "text in an extra number column": ({0: [make_sample(3, n=4, seed=2, uid="t",
                                                        score_b="n/a")]}, False),
}


@pytest.mark.parametrize("name", list(GROWTHS))
def test_a_growth_sorted_alone_serves_the_run_a_whole_sort_serves(tmp_path, monkeypatch, name):
    """Three ways to one run: the growth sorted in with the last steps' rows while the rows
    before them stay in the index file (grown_columns), sorted alone beside the held frame
    (appended), or the whole run sorted again."""
    rows_by_file, fast = GROWTHS[name]
    served = {}
    for way in ("in file", "alone", "whole"):
        root = _dump(tmp_path / way.replace(" ", "_") / "run")
        run = open_run(root)
        run = grown(run, save=False)  # as a followed run is between saves
        _grow(root, rows_by_file)
        in_file = _Taken(append.grown_columns if way == "in file" else None)
        taken = _Taken(append.appended if way == "alone" else None)
        monkeypatch.setattr(refresh, "grown_columns", in_file)
        monkeypatch.setattr(refresh, "appended", taken)
        after = grown(run, save=False)
        assert after.cache == "partial" and in_file
        assert (in_file[-1] is not None) == (fast and way == "in file"), name
        assert bool(taken) == (way != "in file" or not fast), name
        if way == "alone":
            assert (taken[-1] is not None) == fast, name
        held = after.numbers.held
        assert (held is None) == (fast and way == "in file"), name  # only the last steps
        if held is None:  # rows of step 0 again: every row is of its step or later
            tail = len(after.numbers.file.tail)
            assert tail == len(after.samples) if name == "rows of an old step" else (
                0 < tail < len(after.samples))
        rows = keyed(after)
        # each sample reads back as its line check says (a check through a float64 would
        # make the new ones look changed since indexed)
        assert [after.sample(k).error for k in rows["key"]] == [None] * len(rows)
        frame = rows.drop(columns=["key"]).reset_index(drop=True)
        steps = {s: after.step_rows(s).drop(columns=[S.ROW], errors="ignore")
                 .reset_index(drop=True) for s in after.steps}
        served[way] = (frame, after.problems, sorted(after.steps), len(after.samples), steps,
                       after.step_stats)
    for way in ("in file", "alone"):
        got, want = served[way], served["whole"]
        pd.testing.assert_frame_equal(got[0], want[0])
        assert got[1:4] == want[1:4]
        for step, rows in want[4].items():
            pd.testing.assert_frame_equal(got[4][step], rows)
        pd.testing.assert_frame_equal(got[5], want[5])


def _same_run(got, want) -> None:
    """Two runs serve the same samples, steps, per-step rows and a prompt's history (their
    rows numbered apart: S.ROW is where a row is read from; and a growth parsed apart from
    its file's earlier lines carries its own token digest, which views merge by step)."""
    def plain(frame):
        return frame.drop(columns=[S.ROW, S.TOKEN_DIGEST], errors="ignore").reset_index(
            drop=True)

    pd.testing.assert_frame_equal(plain(keyed(got)), plain(keyed(want)))
    assert sorted(got.steps) == sorted(want.steps) and len(got.samples) == len(want.samples)
    for step in want.steps:
        pd.testing.assert_frame_equal(plain(got.step_rows(step)), plain(want.step_rows(step)))
    pd.testing.assert_frame_equal(got.step_stats, want.step_stats)
    prompt = int(want.samples[S.PROMPT_ID].iloc[-1])
    pd.testing.assert_frame_equal(plain(got.numbers.matching(S.PROMPT_ID, prompt)),
                                  plain(want.numbers.matching(S.PROMPT_ID, prompt)))


def test_growths_between_saves_hold_only_the_last_steps_and_serve_the_whole_run(tmp_path):
    """A chain of growths between two saves (each growing the held rows, before or after
    where they start), then a save: at each point the run serves what a fresh index of the
    files serves, and holds only the rows from the first step a growth touched."""
    root = _dump(tmp_path / "run")
    run = open_run(root)
    per_step = 12  # 3 files x 4 samples
    growths = [({0: [make_sample(3, n=6, seed=1, uid="a", score_b=1)]}, 36),
               ({1: [make_sample(3, n=5, seed=2, uid="b", score_b=1)],
                 2: [make_sample(3, n=7, seed=3, uid="c", score_b=1)],
                 0: [make_sample(4, n=4, seed=4, uid="d", score_b=1)]}, 36),
               ({f: [make_sample(5, n=4, seed=5 + f, uid="e", score_b=1)] for f in range(3)},
                36),
               ({2: [make_sample(1, n=4, seed=9, uid="f", score_b=1)]}, per_step)]
    for rows_by_file, prefix in growths:
        _grow(root, rows_by_file)
        run = grown(run, save=False)
        columns = run.numbers.file
        assert run.numbers.held is None and columns.prefix == prefix
        assert len(columns.tail) == len(run.samples) - prefix
        _same_run(run, open_run(root, use_cache=False))
    saved = grown(run, save=True)
    assert saved is run  # nothing new on disk: the held rows wait for the next save
    _grow(root, {0: [make_sample(6, n=4, seed=20, uid="g", score_b=1)]})
    saved = grown(run, save=True)
    assert saved.numbers.held is None and not hasattr(saved.numbers.file, "tail")
    _same_run(saved, open_run(root, use_cache=False))
    _same_run(open_run(root), open_run(root, use_cache=False))
