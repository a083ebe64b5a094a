import sys
import types
from pathlib import Path

from dump_files import line_of, make_sample, write_dump

from loaders import schema as S
from loaders.index.arrow_part import table_of
from loaders.index.chunk import ChunkResult, plan_chunks
from loaders.index.pool import scan_all, scan_chunk


def _scan_in_chunks(path: Path, target: int):
    chunks = plan_chunks(str(path), path.name, 0, 0, path.stat().st_size, target=target)
    return chunks, scan_all(chunks)


def _rows(result: ChunkResult) -> dict[str, list]:
    """A result's rows as lists, whichever way they came: columns (a fork server's
    worker), or an Arrow table (a process that has Arrow at hand makes one)."""
    return table_of(result.rows).to_pydict()


def test_chunks_split_at_newlines_and_cover_the_file(tmp_path):
    path = write_dump(tmp_path / "r.jsonl", [make_sample(s, n=20) for s in range(30)])
    chunks, _ = _scan_in_chunks(path, target=1000)
    data = path.read_bytes()
    assert len(chunks) > 3
    assert chunks[0].start == 0 and chunks[-1].end == len(data)
    for left, right in zip(chunks, chunks[1:]):
        assert left.end == right.start
        assert data[left.end - 1:left.end] == b"\n"


def test_a_file_splits_into_the_fewest_chunks_of_about_equal_size(tmp_path):
    """2.5 targets of bytes make three chunks of ~0.83 target, not two full ones and a
    half one that a core would wait beside."""
    path = write_dump(tmp_path / "r.jsonl", [make_sample(s, n=20) for s in range(300)])
    size = path.stat().st_size
    target = int(size / 2.5)
    sizes = [c.nbytes for c in plan_chunks(str(path), path.name, 0, 0, size, target=target)]
    line = max(map(len, path.read_bytes().splitlines(keepends=True)))
    assert len(sizes) == 3 and sum(sizes) == size
    assert all(abs(n - size / 3) <= line for n in sizes)  # a third, give or take a line


def test_the_pool_hands_out_the_biggest_chunks_first(tmp_path):
    from loaders.index import pool

    small = write_dump(tmp_path / "a.jsonl", [make_sample(s, n=20) for s in range(5)])
    big = write_dump(tmp_path / "b.jsonl", [make_sample(s, n=20) for s in range(50)])
    chunks = [*plan_chunks(str(small), small.name, 0, 0, small.stat().st_size),
              *plan_chunks(str(big), big.name, 1, 0, big.stat().st_size, target=30_000)]
    order = list(pool.biggest_first(chunks))
    assert sorted(order) == list(range(len(chunks))) and order[-1] == 0
    assert [chunks[i].nbytes for i in order] == sorted((c.nbytes for c in chunks), reverse=True)


def test_a_boundary_inside_a_line_longer_than_a_read_moves_to_the_next_line(tmp_path):
    """Lines of 150 kB and 3 MB: the boundary search reads 64 kB, then 1 MB at a time."""
    rows = [make_sample(s, n=4, response="x" * size) for s, size in enumerate(
        [150_000, 3_000_000, 10, 150_000, 20])]
    path = write_dump(tmp_path / "r.jsonl", rows)
    data = path.read_bytes()
    chunks = plan_chunks(str(path), path.name, 0, 0, len(data), target=100_000)
    starts = [0] + [i + 1 for i, byte in enumerate(data) if byte == 10][:-1]
    assert [c.start for c in chunks] == [0, starts[1], starts[2], starts[4]]
    assert chunks[-1].end == len(data)


def test_rows_keep_line_offsets_that_point_at_their_line(tmp_path):
    path = write_dump(tmp_path / "r.jsonl", [make_sample(s, n=20) for s in range(30)])
    chunks, results = _scan_in_chunks(path, target=1000)
    data = path.read_bytes()
    offsets = [offset for result in results for offset in _rows(result)[S.OFFSET]]
    assert sum(r.lines for r in results) == 30
    assert offsets == [i for i in range(len(data)) if i == 0 or data[i - 1:i] == b"\n"][:30]
    start, size = _rows(results[1])[S.OFFSET][0], _rows(results[1])[S.NBYTES][0]
    assert data[start:start + size].startswith(b"{")
    assert data[start + size:start + size + 1] == b"\n"


def test_bad_line_is_isolated_and_neighbours_survive(tmp_path):
    good = [make_sample(s) for s in range(3)]
    path = tmp_path / "r.jsonl"
    path.write_bytes(line_of(good[0]) + b'{"step": 1, "resp\n' + line_of(good[1]) + b"[1, 2]\n"
                     + line_of(good[2]))
    result = scan_chunk(plan_chunks(str(path), "r.jsonl", 0, 0, path.stat().st_size)[0])
    assert list(_rows(result)[S.LINE]) == [1, 3, 5]
    assert [(line, dropped) for line, _, dropped in result.problems] == [(2, True), (4, True)]
    assert "not a JSON object" in result.problems[1][1]


def test_half_written_last_line_is_pending_not_bad(tmp_path):
    path = write_dump(tmp_path / "r.jsonl", [make_sample(0)], extra=b'{"step": 1, "respo')
    result = scan_chunk(plan_chunks(str(path), "r.jsonl", 0, 0, path.stat().st_size)[0])
    assert list(_rows(result)[S.STEP]) == [0] and result.problems == []
    assert result.pending_bytes == len(b'{"step": 1, "respo')
    assert result.parsed_until == path.stat().st_size - result.pending_bytes


def test_complete_last_line_without_newline_is_accepted(tmp_path):
    path = write_dump(tmp_path / "r.jsonl", [make_sample(0)],
                      extra=line_of(make_sample(1)).rstrip(b"\n"))
    result = scan_chunk(plan_chunks(str(path), "r.jsonl", 0, 0, path.stat().st_size)[0])
    assert list(_rows(result)[S.STEP]) == [0, 1]
    assert result.ends_mid_line and result.parsed_until == path.stat().st_size


def test_blank_and_crlf_lines(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + line_of(make_sample(0)).replace(b"\n", b"\r\n") + b"\n"
                     + line_of(make_sample(1)).replace(b"\n", b"\r\n"))
    result = scan_chunk(plan_chunks(str(path), "r.jsonl", 0, 0, path.stat().st_size)[0])
    rows = _rows(result)
    assert list(zip(rows[S.LINE], rows[S.STEP])) == [(1, 0), (3, 1)]
    assert result.problems == []


def test_the_main_process_scans_chunks_while_the_workers_start(tmp_path, monkeypatch):
    from loaders.index import pool

    path = write_dump(tmp_path / "r.jsonl", [make_sample(s, n=20) for s in range(400)])
    chunks = plan_chunks(str(path), path.name, 0, 0, path.stat().st_size, target=2000)
    alone = pool.scan_inline(chunks, 0, None, lambda columns: columns)
    mine, taking = [], pool._while_workers_start

    def recorded(waiting, running):
        for i in taking(waiting, running):
            mine.append(i)
            yield i

    monkeypatch.setattr(pool, "INLINE_BYTES", 0)
    monkeypatch.setattr(pool, "_while_workers_start", recorded)
    # a fork server's workers (the board server's) take ~0.2 s to start: the last chunk at
    # least is taken back and scanned here (a forked worker starts at once)
    monkeypatch.setattr(pool, "_start_method", lambda: "forkserver")
    # a fork server's worker imports this process's __main__ again; an AppTest run earlier
    # in this process left its own script there (which needs its runner's arguments)
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    shared = pool.scan_all(chunks)
    # (from the back of the hand-out order, the smallest, one at a time; on a loaded
    # machine it may take them all)
    assert mine and mine == list(reversed(pool.biggest_first(chunks)))[:len(mine)]
    assert [r.chunk for r in shared] == chunks
    assert [_rows(r)[S.OFFSET] for r in shared] == [_rows(r)[S.OFFSET] for r in alone]
    assert [r.lines for r in shared] == [r.lines for r in alone]


def _child_pids() -> set[int]:
    """This process's children, those ended but not yet reaped (zombies) too.  A thread that
    ends while its tasks are listed (the pool's own, shut down without waiting) hands its
    children to another one: the listing is made again."""
    while True:
        found: set[int] = set()
        try:
            for task in Path("/proc/self/task").iterdir():
                found.update(map(int, (task / "children").read_text().split()))
        except (FileNotFoundError, ProcessLookupError):
            continue
        return found


def test_the_scan_does_not_wait_for_its_workers_to_end_and_leaves_none_behind(
        tmp_path, monkeypatch):
    """The pool is shut down without waiting (the workers end beside the run's sort): every
    worker is still reaped, build after build (a server indexes many runs)."""
    import time

    from loaders.index import pool

    path = write_dump(tmp_path / "r.jsonl", [make_sample(s, n=20) for s in range(200)])
    chunks = plan_chunks(str(path), path.name, 0, 0, path.stat().st_size, target=4000)
    alone = pool.scan_inline(chunks, 0, None, lambda columns: columns)
    monkeypatch.setattr(pool, "INLINE_BYTES", 0)
    monkeypatch.setattr(pool, "_start_method", lambda: "fork")
    before = _child_pids()
    expected = [_rows(r)[S.OFFSET] for r in alone]
    for _ in range(3):  # the parts' maps go at once: a failure's frame holds none
        assert [_rows(r)[S.OFFSET] for r in pool.scan_all(chunks)] == expected
    deadline = time.monotonic() + 20
    while _child_pids() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _child_pids() - before


def test_a_one_threaded_process_forks_its_workers_and_a_threaded_one_does_not():
    import threading

    from loaders.index import pool

    assert pool._start_method() == ("fork" if threading.active_count() == 1 else "forkserver")
    stop = threading.Event()
    extra = threading.Thread(target=stop.wait)
    extra.start()
    try:
        assert pool._start_method() == "forkserver"
    finally:
        stop.set()
        extra.join()
