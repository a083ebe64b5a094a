"""A served run holds no text previews: they are read per shown row from its index file."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from dump_files import line_of, make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.index import file_previews, index_file, ondisk, previews
from loaders.serve.grow import grown, saved


def _dump(root: Path, steps: int = 6, per_step: int = 7) -> Path:
    for rank in range(2):
        samples = [make_sample(step, seed=rank * 100 + i, prompt=f"p{step}-{rank}-{i}",
                               response=f"answer {step}.{rank}.{i} " + "x" * (i * 60),
                               ground_truth=f"gt{i}")
                   for step in range(1, steps + 1) for i in range(per_step)]
        write_dump(root / f"rollout_data_rank_{rank}.jsonl", samples)
    return root


def _texts(run) -> pd.DataFrame:
    return run.with_previews(run.samples)[[S.KEY, *S.TEXT_PREVIEWS]].reset_index(drop=True)


@pytest.fixture
def small_groups(monkeypatch):
    """Row groups of 5 rows: every step's rows straddle several of them."""
    monkeypatch.setattr(index_file, "ROW_GROUP_ROWS", 5)


def test_reopened_run_reads_the_previews_a_parse_holds(tmp_path, small_groups):
    root = _dump(tmp_path / "run")
    parsed = open_run(root, use_cache=False)  # previews held in memory, from the parse
    first, again = open_run(root), open_run(root)
    assert (first.cache, again.cache) == ("miss", "hit")
    for run in (first, again):
        assert not set(S.TEXT_PREVIEWS) & set(run.samples.columns)
        pd.testing.assert_frame_equal(_texts(run), _texts(parsed))
    assert isinstance(parsed.previews, previews.HeldPreviews)
    assert isinstance(again.previews, file_previews.FilePreviews)
    assert pq.ParquetFile(again.index_path).num_row_groups == 17  # 84 rows, 5 a group


def test_step_rows_and_any_rows_get_their_own_texts(tmp_path, small_groups):
    run = open_run(_dump(tmp_path / "run"))
    for step in run.steps:
        rows = run.step_rows(step)
        assert rows[S.PROMPT].str.startswith(f"p{step}-").all()
        assert [p.split("-")[2] for p in rows[S.PROMPT]] == [
            r.split(".")[2].split(" ")[0] for r in rows[S.RESPONSE]]
    picked = run.samples.sample(9, random_state=3)  # rows of many row groups, shuffled
    shown = run.with_previews(picked)
    assert list(shown.index) == list(picked.index)
    expected = {k: t for k, t in zip(_texts(run)[S.KEY], _texts(run)[S.PROMPT])}
    assert shown[S.PROMPT].tolist() == [expected[k] for k in shown[S.KEY]]


def test_a_run_keeps_reading_its_snapshot_after_the_index_is_replaced(tmp_path, small_groups):
    root = _dump(tmp_path / "run")
    old = open_run(root)
    before = _texts(old)
    path = root / "rollout_data_rank_0.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    new_first = make_sample(1, seed=7, prompt="rewritten", response="new")
    path.write_bytes(line_of(new_first) + b"".join(lines[1:]))  # the index is rewritten
    assert open_run(root).cache != "hit"
    pd.testing.assert_frame_equal(_texts(old), before)


def test_growth_holds_its_previews_until_saved_then_the_index_has_them(tmp_path,
                                                                         small_groups):
    root = _dump(tmp_path / "run", steps=2)
    run = open_run(root)
    with open(root / "rollout_data_rank_1.jsonl", "ab") as handle:
        handle.write(line_of(make_sample(3, prompt="late prompt", response="late answer")))
    unsaved = grown(run, save=False)
    # the new rows' texts are held; the old ones are read where they were, not again
    assert isinstance(unsaved.previews, previews.LayeredPreviews)
    assert unsaved.previews.below is run.previews
    assert unsaved.previews.grown.held_bytes > 0
    assert unsaved.step_rows(3)[S.PROMPT].tolist() == ["late prompt"]
    saved(unsaved)
    reopened = open_run(root)
    assert reopened.cache == "hit"
    pd.testing.assert_frame_equal(_texts(reopened), _texts(unsaved))
    now = grown(reopened, save=True)
    assert now is reopened  # nothing changed since


def test_a_whole_run_view_reads_only_the_prompt_preview(tmp_path, small_groups):
    root = _dump(tmp_path / "run")
    parsed, run = open_run(root, use_cache=False), open_run(root)
    for served in (parsed, run):  # held in memory, and read from the index file
        picked = served.samples.sample(11, random_state=5)
        prompts = served.with_previews(picked, (S.PROMPT,))
        assert S.PROMPT in prompts.columns and not {S.RESPONSE, S.GROUND_TRUTH} & set(prompts)
        pd.testing.assert_series_equal(prompts[S.PROMPT],
                                       served.with_previews(picked)[S.PROMPT])
    assert list(run.previews.take(picked[S.ROW].to_numpy(), (S.PROMPT,)).column_names) == [
        S.PROMPT]


def test_an_index_written_over_in_place_is_never_read_as_the_run_s(tmp_path, small_groups):
    """The board replaces its index by rename (a held run keeps its own file); written over
    in place by something else, the file would give other rows' texts: the run says so."""
    root = _dump(tmp_path / "run")
    open_run(root)
    run = open_run(root)
    assert run.cache == "hit" and len(run.step_rows(1))
    open_run(_dump(tmp_path / "other", steps=3))  # another index, copied over this one's bytes
    other = ondisk.index_dir(tmp_path / "other") / "index.parquet"
    with open(run.index_path, "r+b") as handle:
        handle.truncate(0)
        handle.write(other.read_bytes())
    with pytest.raises(file_previews.IndexWrittenOver, match="Refresh"):
        run.step_rows(2)
    again = open_run(root)  # a new open reads the new file through the trust checks
    assert not again.samples.empty and again.step_rows(2)[S.PROMPT].str.startswith("p2-").all()


def test_growth_between_saves_reads_no_old_text_and_shows_every_text_as_a_parse_does(
        tmp_path, small_groups, monkeypatch):
    root = _dump(tmp_path / "run", steps=3)
    run = open_run(root)
    reads = []
    take = type(run.previews).take
    monkeypatch.setattr(type(run.previews), "take",
                        lambda self, rows, *a: reads.append(len(rows)) or take(self, rows, *a))
    for step in (4, 5):  # two growths without a save: layers on layers
        for rank in range(2):
            with open(root / f"rollout_data_rank_{rank}.jsonl", "ab") as handle:
                handle.write(line_of(make_sample(step, seed=step + rank, prompt=f"late {step}",
                                                 response=f"late answer {step}.{rank}")))
        run = grown(run, save=False)
    assert reads == []  # no text of the indexed rows was read to grow
    parsed = open_run(root, use_cache=False)
    pd.testing.assert_frame_equal(_texts(run), _texts(parsed))
    picked = run.samples.sample(9, random_state=3)  # old and new rows, any order
    pd.testing.assert_frame_equal(
        run.with_previews(picked)[list(S.TEXT_PREVIEWS)].reset_index(drop=True),
        parsed.with_previews(parsed.samples.loc[picked.index])[list(S.TEXT_PREVIEWS)]
        .reset_index(drop=True))
    saved(run)
    reopened = open_run(root)
    assert reopened.cache == "hit"
    pd.testing.assert_frame_equal(_texts(reopened), _texts(parsed))
