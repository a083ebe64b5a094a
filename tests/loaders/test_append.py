"""A followed run's growth between saves sorted alone (loaders.index.append): the run it
serves is the one a sort of the whole run serves, row for row and text for text, whether the
growth starts a step, completes one, goes back to an old one, or is one the fast way must
leave to the whole sort (a new extra column, a moved generation cap, a column's type)."""
import pandas as pd
import pytest
from dump_files import keyed, line_of, make_sample, write_dump

from loaders import open_run
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
    rows_by_file, fast = GROWTHS[name]
    served = {}
    for way in ("alone", "whole"):
        root = _dump(tmp_path / way / "run")
        run = open_run(root)
        run = grown(run, save=False)  # held in memory, as a followed run is between saves
        _grow(root, rows_by_file)
        taken = _Taken(append.appended if way == "alone" else None)
        monkeypatch.setattr(refresh, "appended", taken)
        after = grown(run, save=False)
        assert after.cache == "partial" and taken
        assert (taken[-1] is not None) == (fast and way == "alone"), name
        rows = keyed(after)
        # each sample reads back as its line check says (a check through a float64 would
        # make the new ones look changed since indexed)
        assert [after.sample(k).error for k in rows["key"]] == [None] * len(rows)
        frame = rows.drop(columns=["key"]).reset_index(drop=True)
        served[way] = (frame, after.problems, sorted(after.steps), len(after.samples))
    alone, whole = served["alone"], served["whole"]
    pd.testing.assert_frame_equal(alone[0], whole[0])
    assert alone[1:] == whole[1:]
