"""A run served from its index file gives every page the numbers its whole frame gives.

The run is written with row groups of 7 rows and aggregated 10 rows at a time, so a step
spans row groups and a chunk of steps spans several: what the old design computed over the
whole frame in memory (`run.samples`, and the run opened without a cache) is the reference.
"""
import numpy as np
import pandas as pd
import pytest
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.groups.history import prompt_steps
from loaders.groups.table import passed
from loaders.health import views
from loaders.health.check import check
from loaders.index import index_file
from loaders.index import numbers as N
from loaders.index.file_previews import IndexDamaged
from loaders.index.index_columns import StepRanges
from loaders.index.steps import step_stats
from loaders.serve.groups import GroupOptions, Groups
from loaders.serve.runset import _curve_stats, curve_stats

STEPS, RANKS, GROUP = 6, 2, 4


def _sample(step: int, rank: int, i: int) -> dict:
    extra = {}
    if i == 1 and step % 2:
        extra["status"] = "aborted"  # left out of training
    if i == 2 and step == 3:
        extra["validation"] = True
    if i == 3:
        extra["reward"] = float("nan") if step == 4 else 1.0
    return make_sample(step, n=4 + i, seed=rank * 10 + i // GROUP, prompt=f"q{(i + step) % 5}",
                       entropy=[0.5] * (4 + i), acc=float(i % 2), **extra)


@pytest.fixture
def runs(tmp_path, monkeypatch):
    """(served from its index file, held in memory): the same dump both ways."""
    for rank in range(RANKS):
        write_dump(tmp_path / "run" / f"rollout_data_rank_{rank}.jsonl",
                   [_sample(step, rank, i) for step in range(STEPS) for i in range(GROUP * 2)])
    monkeypatch.setattr(index_file, "ROW_GROUP_ROWS", 7)
    monkeypatch.setattr(N, "CHUNK_ROWS", 10)
    open_run(tmp_path / "run")  # writes the index
    served = open_run(tmp_path / "run")
    held = open_run(tmp_path / "run", use_cache=False)
    assert served.cache == "hit" and served.numbers.held is None
    assert held.numbers.held is not None
    return served, held


def test_reopen_reads_no_frame_and_the_frame_read_is_the_held_one(runs):
    served, held = runs
    assert served.size == held.size == STEPS * RANKS * GROUP * 2
    assert "samples" not in served._memo.computed()
    pd.testing.assert_frame_equal(served.samples, held.samples)
    assert served.steps == held.steps == list(range(STEPS))
    assert served.nan_values == held.nan_values


@pytest.mark.parametrize("part", ["all", "train", "validation"])
def test_every_view_of_a_part_has_the_frames_numbers(runs, part):
    served, held = runs
    if part != "all":
        served, held = (r.part(part == "validation") for r in (served, held))
    served, held = served.trained(), held.trained()
    frame = held.samples  # the old design's frame of this part
    assert served.size == len(frame) and served.steps == sorted(frame[S.STEP].unique())
    pd.testing.assert_frame_equal(served.step_stats, step_stats(frame))
    for step in served.steps:
        pd.testing.assert_frame_equal(served.step_rows(step), held.step_rows(step))
        expected = held.with_previews(frame[frame[S.STEP] == step])
        pd.testing.assert_frame_equal(served.step_rows(step), expected)
    if held.left_out is not None:
        pd.testing.assert_frame_equal(served.left_out.read(), held.left_out.read())
        assert served.left_out.size == held.left_out.size > 0


def test_health_ranks_and_quality_match_the_whole_frame(runs):
    served, held = runs
    frame = held.samples
    new, old = served.health(), check(held.root, frame, metric_files=held.metric_files)
    pd.testing.assert_frame_equal(new.signals, old.signals, check_like=True)
    assert new.alerts == old.alerts
    for value in views.RANK_VALUES:
        pd.testing.assert_frame_equal(views.rank_table_of(served.numbers, value),
                                      views.rank_table(frame, value))
    pd.testing.assert_frame_equal(views.quality_of(served.numbers), views.quality(frame))
    pd.testing.assert_frame_equal(curve_stats(served), _curve_stats(frame))


def test_groups_and_prompt_history_match_the_whole_frame(runs):
    served, held = runs
    trained = served.trained()
    frame = held.trained().samples
    steps, table = trained.groups().history()
    expected = prompt_steps(frame, passed(frame)[0])
    pd.testing.assert_frame_equal(steps, expected)
    assert set(table.index) == set(frame[S.PROMPT_ID])
    assert table[S.PROMPT].notna().all()
    old = Groups(held.trained().numbers, held.trained().left_out, None, held.with_previews)
    for step in trained.steps:
        for options in (GroupOptions(), GroupOptions(show_left_out=True)):
            new_step, old_step = trained.groups().step(step, options), old.step(step, options)
            pd.testing.assert_frame_equal(new_step.table, old_step.table)
            assert (new_step.pass_rule, new_step.left_out_samples) == (
                old_step.pass_rule, old_step.left_out_samples)
    assert trained.groups().step(1, GroupOptions()).pass_rule == "acc > 0.5"


def test_one_prompts_samples_are_read_by_their_row_groups(runs):
    served, held = runs
    prompt = int(held.samples[S.PROMPT_ID].iloc[5])
    frame = held.samples
    expected = frame[frame[S.PROMPT_ID] == prompt]
    got = served.numbers.matching(S.PROMPT_ID, prompt)
    pd.testing.assert_frame_equal(got, expected)
    assert len(got) > 7  # spread over more than one row group


def test_step_ranges_and_chunks_of_whole_steps():
    ranges = StepRanges.of(np.array([0, 0, 0, 2, 2, 5, 5, 5, 5, 9]))
    assert ranges.rows(2) == (3, 5) and ranges.rows(9) == (9, 10) and ranges.rows(3) == (0, 0)
    assert N._chunks(ranges, 4) == [(0, 5), (5, 9), (9, 10)]
    assert N._chunks(ranges, 100) == [(0, 10)]


def _index(root):
    return root / ".rl_board_cache" / "index.parquet"


def _rewritten(root, edit):
    """The run's index file rewritten (row groups of 7) with `edit` applied to its table."""
    import pyarrow.parquet as pq

    table = pq.read_table(_index(root))
    pq.write_table(edit(table), _index(root), row_group_size=7, compression="zstd")


def test_a_null_past_the_first_row_group_is_not_trusted(runs):
    import pyarrow as pa

    served, _ = runs
    def nulled(table):
        line = table.column(S.LINE).to_pylist()
        line[20] = None
        return table.set_column(table.schema.get_field_index(S.LINE), S.LINE,
                                pa.array(line, pa.int64()))
    _rewritten(served.root, nulled)
    again = open_run(served.root)
    assert again.cache == "miss" and again.size == served.size
    assert any("'line' has nulls" in p["reason"] for p in again.problems if p.get("index"))


def test_a_damaged_index_is_removed_on_its_first_bad_read_and_built_again(runs):
    import pyarrow.parquet as pq

    served, held = runs
    meta = pq.ParquetFile(_index(served.root)).metadata
    group = meta.row_group(3)  # past the first: the open does not read it
    reward = next(group.column(i) for i in range(group.num_columns)
                  if group.column(i).path_in_schema == S.REWARD)
    data = bytearray(_index(served.root).read_bytes())
    for at in range(reward.data_page_offset, reward.data_page_offset
                    + reward.total_compressed_size):
        data[at] ^= 0x5A
    _index(served.root).write_bytes(bytes(data))  # in place: the same inode
    fresh = open_run(served.root)
    assert fresh.cache == "hit"
    with pytest.raises(IndexDamaged, match="Refresh to build it again"):
        assert fresh.step_stats is not None
    assert not _index(served.root).exists()  # so the next open does not trust it again
    again = open_run(served.root)
    assert again.cache == "miss"
    pd.testing.assert_frame_equal(again.step_stats, held.step_stats)


def test_an_index_not_sorted_by_step_is_damaged(runs):
    import pyarrow.compute as pc

    served, _ = runs
    _rewritten(served.root, lambda table: table.take(pc.sort_indices(
        table, sort_keys=[(S.STEP, "descending")])))
    with pytest.raises(IndexDamaged, match="not sorted by step"):
        assert open_run(served.root).steps
    assert open_run(served.root).cache == "miss"


@pytest.mark.parametrize("seed", range(30))
def test_step_ranges_of_a_column_in_order_are_np_uniques(seed):
    """StepRanges.of finds a sorted column's steps where it changes; they equal np.unique's
    (steps, first rows) and their ends, dtypes too; a column out of order goes to np.unique."""
    from loaders.index.index_columns import StepRanges

    rng = np.random.default_rng(seed)
    column = rng.integers(-3, 6, int(rng.integers(0, 60))).astype(
        [np.int64, np.int32][seed % 2])
    if seed % 5:
        column = np.sort(column)
    steps, starts = np.unique(column, return_index=True)
    got = StepRanges.of(column)
    assert got.steps.tolist() == steps.tolist() and got.steps.dtype == column.dtype
    assert got.starts.tolist() == starts.tolist() and got.starts.dtype == np.int64
    assert got.ends.tolist() == np.append(starts[1:], len(column)).tolist()
