"""What a served run gives its pages: samples found by key (every key of a real run, in any
order, and unknown keys), and tables derived from the run made once."""
from __future__ import annotations

from pathlib import Path

import pytest
from dump_files import make_sample, write_dump

from loaders import schema as S
from loaders.serve.locations import Locations
from loaders.serve.open_run import open_run
from loaders.serve.sample import Location


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    root = tmp_path / "run"
    for rank, name in enumerate(("rollout_data_rank_0.jsonl", "odd:name rank_1.jsonl")):
        write_dump(root / name, [make_sample(step, n=3 + i, seed=rank * 10 + i)
                                 for step in range(4) for i in range(5)])
    return root


def _expected(frame, row: int) -> Location:
    values = frame.iloc[row]  # a frame read with the columns of a Location
    return Location(str(values[S.FILE]), int(values[S.LINE]), int(values[S.OFFSET]),
                    int(values[S.NBYTES]), int(values[S.STEP]), int(values[S.ITEM]),
                    int(values[S.LINE_CHECK]))


def test_every_key_gives_its_own_rows_location_in_the_order_asked(run_dir: Path) -> None:
    run = open_run(run_dir, use_cache=False)
    frame = run.with_previews(run.samples)
    locations = Locations(run.samples, run.previews)
    order = list(range(len(frame)))[::-1]
    keys = [frame[S.KEY].iat[row] for row in order]
    assert len(locations) == len(frame) == 40
    assert locations.of(keys) == [_expected(frame, row) for row in order]
    assert locations[keys[3]] == _expected(frame, order[3])
    assert any(key.startswith("odd:name rank_1.jsonl:") for key in keys)


def test_a_key_the_run_lacks_is_a_key_error_and_no_keys_is_no_locations(run_dir: Path) -> None:
    run = open_run(run_dir)
    locations = Locations(run.samples, run.previews)
    for odd in ("rollout_data_rank_0.jsonl:999", "nofile.jsonl:1", "rollout_data_rank_0.jsonl",
                "rollout_data_rank_0.jsonl:1#7", "rollout_data_rank_0.jsonl:x", ":1",
                f"rollout_data_rank_0.jsonl:{2**40}", "rollout_data_rank_0.jsonl:" + "9" * 30,
                "rollout_data_rank_0.jsonl:1#" + "9" * 30, "rollout_data_rank_0.jsonl:١"):
        with pytest.raises(KeyError, match=odd):
            locations.of(["rollout_data_rank_0.jsonl:1", odd])
    assert locations.of([]) == []
    with pytest.raises(KeyError):
        Locations(run.samples[:0], run.previews)["rollout_data_rank_0.jsonl:1"]


def test_a_run_past_the_packed_bits_is_found_field_by_field(run_dir: Path) -> None:
    """A line of more than 65,536 samples (an item past 16 bits) sorts by record."""
    run = open_run(run_dir, use_cache=False)
    frame = run.with_previews(run.samples)
    frame[S.ITEM] = frame[S.ITEM] + 70_000 * (frame.index % 2)
    keys = [S.sample_key(f, line, item) for f, line, item in
            zip(frame[S.FILE].astype(str), frame[S.LINE], frame[S.ITEM])]
    locations = Locations(frame, None)
    assert [loc.item for loc in locations.of(keys[::-1])] == frame[S.ITEM].tolist()[::-1]
    with pytest.raises(KeyError):
        locations[f"rollout_data_rank_0.jsonl:{2**40}"]


def test_a_sample_read_by_key_is_that_lines_sample(run_dir: Path) -> None:
    run = open_run(run_dir, use_cache=False)
    key = "odd:name rank_1.jsonl:7"
    sample = run.sample(key)
    rows = run.with_previews(run.samples)
    row = rows[rows[S.KEY] == key].iloc[0]
    assert sample.scalars[S.REWARD] == pytest.approx(row[S.REWARD])
    assert [s.scalars[S.REWARD] for s in run.step_samples(2)] == pytest.approx(
        run.samples.loc[run.samples[S.STEP] == 2, S.REWARD].tolist())


def test_a_table_derived_from_the_run_is_made_once_per_run_and_key(run_dir: Path) -> None:
    run = open_run(run_dir, use_cache=False)
    made: list[str] = []

    def table(name: str) -> int:
        made.append(name)
        return len(made)

    assert [run.derived(("t", n), lambda n=n: table(n)) for n in "aab"] == [1, 1, 2]
    assert run.derived(("t", "a"), lambda: table("again")) == 1 and made == ["a", "b"]
    assert open_run(run_dir, use_cache=False).derived(("t", "a"), lambda: table("new")) == 3
