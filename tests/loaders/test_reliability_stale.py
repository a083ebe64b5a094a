"""An index never outlives the bytes it describes: edits in place, renames over the file and
restored mtimes are noticed on reopen, and a sample read that finds other bytes than were
indexed says so (and names the file) instead of showing a second set of numbers."""
import os

import pytest
from dump_files import edit_in_place, keyed, line_of, make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.find.walk import discover
from loaders.index import ondisk
from loaders.index.refresh import refresh
from loaders.serve.sample import Location, read_samples

NAME = "rollout_data_rank_0.jsonl"


@pytest.fixture
def big(tmp_path):
    """60 samples (~30 KB, well past the edge hashes) with rewards 0.250, 0.251, ..."""
    root = tmp_path / "run"
    write_dump(root / NAME, [make_sample(i // 20, seed=i, reward=0.25 + i / 1000)
                             for i in range(60)])
    return root


def _reward(run, line: int) -> float:
    rows = run.samples[(run.samples[S.FILE] == NAME) & (run.samples[S.LINE] == line)]
    return float(rows[S.REWARD].iloc[0])




def _restore_times(path, stat: os.stat_result) -> None:
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_same_length_edit_in_the_middle_with_mtime_restored_is_reparsed(big):
    path = big / NAME
    assert _reward(open_run(big), 31) == 0.28
    before = path.stat()
    edit_in_place(path, b'"reward":0.28,', b'"reward":0.98,')
    _restore_times(path, before)
    assert path.stat().st_size == before.st_size
    run = open_run(big)
    assert run.cache != "hit" and _reward(run, 31) == 0.98


def test_sed_i_style_rewrite_is_reparsed(big):
    path = big / NAME
    open_run(big)
    data = path.read_bytes().replace(b'"reward":0.28,', b'"reward":0.77,')
    tmp = big / "sed_tmp"
    tmp.write_bytes(data)
    os.replace(tmp, path)  # what sed -i does: a new inode under the old name
    assert _reward(open_run(big), 31) == 0.77


def test_file_replaced_by_rename_with_same_size_and_mtime_is_reparsed(big):
    path = big / NAME
    open_run(big)
    before = path.stat()
    tmp = big / "replacement"
    tmp.write_bytes(path.read_bytes().replace(b'"reward":0.28,', b'"reward":0.55,'))
    os.utime(tmp, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(tmp, path)
    assert _reward(open_run(big), 31) == 0.55


def test_bad_line_fixed_in_place_is_picked_up(big):
    path = big / NAME
    good = line_of({"step": 7, "response": "fixed", "reward": 0.5})
    bad = b"{" + b"x" * (len(good) - 3) + b"}\n"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:30] + [bad] + lines[30:]))
    first = open_run(big)
    assert first.bad_lines == 1 and 7 not in first.steps
    before = path.stat()
    edit_in_place(path, bad, good)
    _restore_times(path, before)
    run = open_run(big)
    assert run.bad_lines == 0 and 7 in run.steps and len(run.samples) == 61


def test_an_edit_in_the_same_clock_tick_is_caught_by_content(big, monkeypatch):
    """A write right after the index took its stat may leave size, times and inode as they
    were (coarse file clocks): a state that fresh is checked by content on reopen."""
    path = big / NAME
    open_run(big)
    edit_in_place(path, b'"reward":0.28,', b'"reward":0.66,')
    monkeypatch.setattr(ondisk.FileState, "same_stat", lambda self, stat: True)
    assert _reward(open_run(big), 31) == 0.66


def test_touch_alone_is_still_not_a_reparse(big, monkeypatch):
    path = big / NAME
    open_run(big)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))

    def fail(chunk):
        raise AssertionError(f"parsed {chunk}")

    monkeypatch.setattr("loaders.index.pool.scan_chunk", fail)
    assert open_run(big).cache == "partial"


def test_file_state_records_inode_and_ctime(big):
    state = open_run(big).files[NAME]
    stat = (big / NAME).stat()
    assert (state.inode, state.ctime_ns) == (stat.st_ino, stat.st_ctime_ns)
    assert state.block_hash and ondisk.INDEX_VERSION >= 5


def _locations(run) -> dict[str, Location]:
    frame = keyed(run)
    return {row[S.KEY]: Location(row[S.FILE], row[S.LINE], row[S.OFFSET], row[S.NBYTES],
                                 row[S.STEP], row[S.ITEM], row[S.LINE_CHECK])
            for _, row in frame.iterrows()}


def test_a_sample_read_after_a_same_length_edit_is_an_error_naming_the_file(big):
    run = open_run(big)
    locations = _locations(run)
    key = f"{NAME}:31"
    assert read_samples(big, [locations[key]], run.formats)[key].scalars[S.REWARD] == 0.28
    edit_in_place(big / NAME, b'"reward":0.28,', b'"reward":0.99,')
    found = read_samples(big, [locations[key], locations[f"{NAME}:1"]], run.formats)
    sample = found[key]
    assert sample.error and "changed on disk" in sample.error and sample.stale
    assert not sample.scalars  # no second number for this sample
    assert found.stale == {NAME} and found[f"{NAME}:1"].error is None


def test_a_sample_read_of_a_shifted_line_is_an_error_even_without_a_check(big):
    run = open_run(big)
    path = big / NAME
    lines = path.read_bytes().splitlines(keepends=True)
    lines[0] = lines[0].replace(b'"reward":0.25,', b'"reward":0.5,')  # one byte shorter
    path.write_bytes(b"".join(lines))
    sample = run.sample(f"{NAME}:31")
    assert sample.error and "changed on disk" in sample.error and sample.stale


def test_refresh_parses_a_stale_file_again_whole(big, monkeypatch):
    write_dump(big / "rollout_data_rank_1.jsonl", [make_sample(0)])
    run = open_run(big)
    stored = ondisk.load_index(big)
    seen = []
    real = __import__("loaders.index.pool", fromlist=["scan_chunk"]).scan_chunk
    monkeypatch.setattr("loaders.index.pool.scan_chunk", lambda c: seen.append(c) or real(c))
    fresh, status = refresh(discover(big), stored, stale={NAME})
    assert status == "partial" and [(c.rel, c.start) for c in seen] == [(NAME, 0)]
    assert len(fresh.frame) == len(run.samples)


@pytest.mark.parametrize("make", ["native_forks", "verl", "roll_board", "roll_dump", "trl",
                                  "nemo", "prime"])
def test_every_format_reads_back_clean_with_its_check(tmp_path, make):
    """No false alarms: every sample of an unchanged dump passes its line check."""
    import format_fixtures as F

    root = getattr(F, make)(tmp_path / make)
    run = open_run(root)
    locations = _locations(run)
    found = read_samples(root, list(locations.values()), run.formats)
    assert len(found) == len(run.samples) and not found.stale
    assert not [s.error for s in found.values() if s.error]


def test_a_fresh_state_is_checked_by_content_until_it_is_old_enough(big, monkeypatch):
    """Right after a write, reopening re-reads the sampled blocks (and stays a hit, also
    once past the racy window); the renewed state is saved with the next real change, and
    from then on the stat suffices."""
    import time

    from loaders.index import refresh as R
    from loaders.index import work as W

    other = write_dump(big / "rollout_data_rank_1.jsonl", [make_sample(0)])
    open_run(big)
    reads = []
    real = R.content_hashes
    for module in (R, W):  # a file's content read to plan its work, and to save its state
        monkeypatch.setattr(module, "content_hashes",
                            lambda *a: reads.append(a[0].name) or real(*a))
    assert open_run(big).cache == "hit" and NAME in reads
    later = time.time_ns() + 10 * ondisk.RACY_NS
    monkeypatch.setattr(W.time, "time_ns", lambda: later)
    assert open_run(big).cache == "hit"  # renewing alone rewrites no index
    with open(other, "ab") as handle:
        handle.write(line_of(make_sample(1)))
    renewed = open_run(big)
    assert renewed.cache == "partial" and not renewed.files[NAME].racy
    monkeypatch.undo()
    reads.clear()
    for module in (R, W):  # a file's content read to plan its work, and to save its state
        monkeypatch.setattr(module, "content_hashes",
                            lambda *a: reads.append(a[0].name) or real(*a))
    assert open_run(big).cache == "hit" and NAME not in reads
