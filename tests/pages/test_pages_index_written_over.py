"""An index file written over in place while the board holds its run: one line, no trace."""
from apptest import board, errors
from dump_files import make_sample, write_dump

from loaders.index import ondisk


def test_the_page_says_the_index_was_written_over_and_shows_no_other_rows(tmp_path):
    root = tmp_path / "run"
    write_dump(root / "rollout_data_rank_0.jsonl",
               [make_sample(step, seed=i, prompt=f"p{step}-{i}") for step in range(6)
                for i in range(3)])
    at = board(root, page="responses", step="1")
    assert not errors(at)
    other = tmp_path / "other"
    write_dump(other / "rollout_data_rank_0.jsonl",
               [make_sample(step, seed=9, prompt="OTHER") for step in range(3)])
    board(other)  # its index, copied over the held run's bytes below
    held = ondisk.index_dir(root) / "index.parquet"
    with open(held, "r+b") as handle:
        handle.truncate(0)
        handle.write((ondisk.index_dir(other) / "index.parquet").read_bytes())
    shown = board(root, page="responses", step="4")
    assert any("written over while the run was open" in e for e in errors(shown))
    assert not shown.exception and "OTHER" not in str(shown.get("arrow_data_frame"))
