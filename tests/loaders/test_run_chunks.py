"""loaders.index.work.sized_for_run: a small run's files of lines in fewer, bigger chunks; a big
run's as planned; the index the same either way."""
import pandas as pd
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders.find.walk import scan
from loaders.index import refresh, work

CHUNK = 8 << 10


def _dump(root, files=2, steps=60):
    for rank in range(files):
        write_dump(root / f"rollout_data_rank_{rank}.jsonl",
                   [make_sample(s, n=8) for s in range(steps)])


def _works(root):
    return [w for d in scan(root).dumps if (w := work.work_for(d, None)) is not None]


def _bounds(chunks):
    return [(c.start, c.end) for c in chunks]


def test_a_small_runs_files_split_into_chunks_half_as_big_again(tmp_path, monkeypatch):
    _dump(tmp_path)
    monkeypatch.setattr(work, "CHUNK_BYTES", CHUNK)
    planned = _works(tmp_path)
    sized = work.sized_for_run(planned)
    for before, after in zip(planned, sized):
        size = before.stat.st_size
        assert len(before.chunks) > len(after.chunks) > 1
        assert max(c.nbytes for c in before.chunks) <= CHUNK + 2048  # a step +- one line
        assert max(c.nbytes for c in after.chunks) <= CHUNK * 3 // 2 + 2048
        # the same bytes, end to end, each boundary at a line's start
        assert after.chunks[0].start == 0 and after.chunks[-1].end == size
        assert all(a.end == b.start for a, b in zip(after.chunks, after.chunks[1:]))
        data = before.dump.path.read_bytes()
        assert all(data[c.start - 1:c.start] == b"\n" for c in after.chunks[1:])


def test_a_big_run_keeps_its_chunks(tmp_path, monkeypatch):
    _dump(tmp_path)
    monkeypatch.setattr(work, "CHUNK_BYTES", CHUNK)
    planned = _works(tmp_path)
    total = sum(w.stat.st_size for w in planned)
    monkeypatch.setattr(work, "SMALL_RUN_CHUNKS", total // CHUNK - 1)  # just over the line
    assert [_bounds(w.chunks) for w in work.sized_for_run(planned)] == [
        _bounds(w.chunks) for w in planned]
    monkeypatch.setattr(work, "SMALL_RUN_CHUNKS", total // CHUNK + 1)
    assert [_bounds(w.chunks) for w in work.sized_for_run(planned)] != [
        _bounds(w.chunks) for w in planned]


def test_a_file_of_one_chunk_is_left_as_it_is(tmp_path, monkeypatch):
    _dump(tmp_path, files=1, steps=3)
    monkeypatch.setattr(work, "CHUNK_BYTES", CHUNK)
    planned = _works(tmp_path)
    assert len(planned[0].chunks) == 1
    assert work.sized_for_run(planned)[0] is planned[0]


def test_an_index_scans_the_bigger_chunks_and_reads_the_same_run(tmp_path, monkeypatch):
    _dump(tmp_path, files=3)
    whole = open_run(tmp_path, use_cache=False).samples
    monkeypatch.setattr(work, "CHUNK_BYTES", CHUNK)
    scanned = []

    def recording(tasks, *args, **kwargs):
        scanned.extend(task.nbytes for task in tasks)
        return scan_all(tasks, *args, **kwargs)

    scan_all = refresh.scan_all
    monkeypatch.setattr(refresh, "scan_all", recording)
    chunked = open_run(tmp_path, use_cache=False).samples
    assert max(scanned) > CHUNK + 2048  # the run's own, not CHUNK_BYTES
    assert len(scanned) == sum(len(w.chunks) for w in work.sized_for_run(_works(tmp_path)))
    pd.testing.assert_frame_equal(whole, chunked)
