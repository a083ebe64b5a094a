"""A sample whose line changed on disk after the run indexed it is an error marked stale,
end to end: the run names the file, nothing stale is cached, and Catalog.reparse brings the
table and the sample back into agreement."""
import os
import threading

import pytest
from dump_files import edit_in_place, keyed, make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.serve.catalog import Catalog

NAME = "rollout_data_rank_0.jsonl"
OTHER = "rollout_data_rank_1.jsonl"
KEY = f"{NAME}:31"


@pytest.fixture
def big(tmp_path):
    """60 samples in steps 0-2 with rewards 0.250, 0.251, ... (line 31 has 0.28), and a
    second file that never changes."""
    root = tmp_path / "run"
    write_dump(root / NAME, [make_sample(i // 20, seed=i, reward=0.25 + i / 1000)
                             for i in range(60)])
    write_dump(root / OTHER, [make_sample(i, seed=99) for i in range(3)])
    return root




def _table_reward(run, key: str) -> float:
    rows = keyed(run)
    return float(rows.loc[rows[S.KEY] == key, S.REWARD].iloc[0])


def test_a_sample_edited_after_indexing_is_a_stale_error_not_a_second_number(big):
    run = open_run(big)
    assert _table_reward(run, KEY) == 0.28
    edit_in_place(big / NAME, b'"reward":0.28,', b'"reward":0.98,')
    sample = run.sample(KEY)
    assert sample.stale and sample.error and "changed on disk" in sample.error
    assert not sample.scalars and not sample.texts
    assert run.stale_files == {NAME}
    assert run.sample(f"{OTHER}:1").error is None and run.stale_files == {NAME}


def test_a_stale_sample_is_not_cached(big):
    path = big / NAME
    run = open_run(big)
    original = path.read_bytes()
    edit_in_place(path, b'"reward":0.28,', b'"reward":0.98,')
    assert run.sample(KEY).stale
    path.write_bytes(original)  # put back: the index describes these bytes again
    assert run.sample(KEY).scalars[S.REWARD] == 0.28


def test_step_texts_leave_stale_samples_out_name_their_file_and_are_not_cached(big):
    path = big / NAME
    run = open_run(big)
    original = path.read_bytes()
    edit_in_place(path, b'"reward":0.28,', b'"reward":0.98,')
    texts = run.step_texts(1)
    assert texts.stale == {NAME} and KEY not in texts
    assert f"{NAME}:30" in texts and run.stale_files == {NAME}
    path.write_bytes(original)
    again = run.step_texts(1)
    assert not again.stale and KEY in again


def test_a_part_shares_the_stale_files_of_its_run(big):
    run = open_run(big)
    edit_in_place(big / NAME, b'"reward":0.28,', b'"reward":0.98,')
    assert run.part(False).sample(KEY).stale
    assert run.stale_files == {NAME}


def test_open_run_parses_the_stale_files_again_whole(big, monkeypatch):
    open_run(big)
    seen = []
    real = __import__("loaders.index.pool", fromlist=["scan_chunk"]).scan_chunk
    monkeypatch.setattr("loaders.index.pool.scan_chunk", lambda c: seen.append(c) or real(c))
    run = open_run(big, stale={NAME})
    assert [(c.rel, c.start) for c in seen] == [(NAME, 0)] and run.cache == "partial"


def test_catalog_reparse_brings_the_table_and_the_sample_into_agreement(big):
    catalog = Catalog(big)
    run = catalog.run(big)
    stat = (big / NAME).stat()
    edit_in_place(big / NAME, b'"reward":0.28,', b'"reward":0.98,')
    os.utime(big / NAME, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # stats alone miss it
    assert run.sample(KEY).stale
    new = catalog.reparse(big, run.stale_files)
    assert new is not run and catalog.run(big) is new and not new.stale_files
    sample = new.sample(KEY)
    assert sample.error is None and sample.scalars[S.REWARD] == 0.98
    assert _table_reward(new, KEY) == 0.98
    assert catalog.run(big).sample(KEY).scalars[S.REWARD] == 0.98


def test_stale_files_are_recorded_from_many_threads(big):
    run = open_run(big)
    edit_in_place(big / NAME, b'"reward":0.28,', b'"reward":0.98,')
    keys = [f"{NAME}:{line}" for line in range(1, 61)] + [f"{OTHER}:1"]
    errors = []

    def read(key):
        try:
            assert run.sample(key).stale == (key == KEY)
        except AssertionError as err:
            errors.append(err)

    threads = [threading.Thread(target=read, args=(key,)) for key in keys]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and run.stale_files == {NAME}
