"""Data shown wrong or lost (issue 26 §3, §4): a sub-run's file read in its own format, an
edit in place that the sampled hashes miss, a dangling rank link, a run of empty files."""
from pathlib import Path

from dump_files import edit_in_place, make_sample, write_dump
from torch_dumps import slime_run

from loaders import open_run
from loaders import schema as S
from loaders.index.hashes import EDGE_BYTES, _block_spans
from loaders.serve.catalog import Catalog

NAME = "rollout_data_rank_0.jsonl"
EDITED = b'"reward":0.9999'


def test_a_pt_sub_run_beside_a_jsonl_dump_is_read_as_slime(tmp_path):
    base = slime_run(tmp_path / "run")
    write_dump(base / NAME, [make_sample(i // 5, seed=i) for i in range(10)])
    catalog = Catalog(base)
    assert "rollout_data" in catalog.sub_runs()
    run = catalog.run(base / "rollout_data")
    assert run.formats == {"3.pt": "slime"} and run.bad_lines == 0
    assert len(run.samples) == 4 and run.steps == [3]
    whole = catalog.run(base)  # every sample; the rollout joined to its train file there
    assert len(whole.samples) == 14 and whole.samples[S.LOG_RATIO_MEAN].notna().sum() == 14


def test_the_cli_reads_a_slime_dir_walked_from_itself(tmp_path):
    slime_run(tmp_path / "run")  # walked from train_data/: rollout_data/ is outside the run
    run = open_run(tmp_path / "run" / "train_data", use_cache=False)
    assert run.formats == {"3.pt": "slime"} and len(run.samples) == 4
    assert run.samples[S.FILE].eq("3.pt").all()


def _four_mb(root: Path) -> tuple[Path, bytes, str]:
    """A ~4 MB dump, the reward text of one line that lies outside every hashed block, and
    that line's sample key."""
    samples = [make_sample(i // 100, seed=i, reward=round(0.1 + i / 10_000, 4),
                           prompt=f"Question {i}: " + "x" * 1900) for i in range(2000)]
    path = write_dump(root / NAME, samples)
    size = path.stat().st_size
    assert size > 4_000_000
    hashed = [(0, EDGE_BYTES), (size - EDGE_BYTES, EDGE_BYTES), *_block_spans(size)]
    offset = 0
    for i, line in enumerate(path.read_bytes().splitlines(keepends=True)):
        end = offset + len(line)
        text = f'"reward":{samples[i]["reward"]}'.encode()
        if len(text) == len(EDITED) and all(end <= a or offset >= a + n for a, n in hashed):
            return path, text, f"{NAME}:{i + 1}"
        offset = end
    raise AssertionError("every line touches a hashed block")


def _rewards(run) -> set[float]:
    return set(run.samples[S.REWARD].round(4).tolist())


def test_an_edit_between_the_hashed_blocks_is_parsed_again_by_the_next_open(tmp_path):
    """The sampled hashes miss it; the same size with another stat has every indexed line
    checked (loaders.index.line_checks), so the reopen parses the file again."""
    path, reward, key = _four_mb(tmp_path / "run")
    open_run(path.parent)
    edit_in_place(path, reward, EDITED)
    again = open_run(path.parent)
    assert again.cache != "hit" and 0.9999 in _rewards(again)
    assert again.sample(key).error is None and again.sample(key).scalars[S.REWARD] == 0.9999
    assert open_run(path.parent).cache == "hit"  # parsed once, not on every open


def test_an_edit_a_sample_read_found_is_parsed_again_by_the_next_open(tmp_path):
    """Edited while a run is held: its sample read says so, and every later open (the CLI,
    a restarted board) parses the file again."""
    path, reward, key = _four_mb(tmp_path / "run")
    held = open_run(path.parent)
    edit_in_place(path, reward, EDITED)
    assert "changed on disk" in held.sample(key).error
    again = open_run(path.parent)
    assert again.cache != "hit" and 0.9999 in _rewards(again)
    assert open_run(path.parent).cache == "hit"


def test_the_board_refresh_after_changed_on_disk_shows_the_new_reward(tmp_path):
    path, reward, key = _four_mb(tmp_path / "run")
    catalog = Catalog(path.parent)
    held = catalog.run(path.parent)
    edit_in_place(path, reward, EDITED)
    assert "changed on disk" in held.sample(key).error
    catalog.refresh()
    fresh = catalog.run(path.parent)
    assert 0.9999 in _rewards(fresh) and fresh.sample(key).error is None
    assert fresh.sample(key).scalars[S.REWARD] == 0.9999


def test_a_run_of_only_empty_files_loads_again_from_its_index_without_a_note(tmp_path):
    root = tmp_path / "run"
    root.mkdir()
    for rank in range(2):
        (root / f"rollout_data_rank_{rank}.jsonl").touch()
    first = open_run(root)
    again = open_run(root)
    assert len(first.samples) == len(again.samples) == 0 and again.cache == "hit"
    assert not [p for p in again.problems if p.get("index")], again.problems
