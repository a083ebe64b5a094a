"""Following a live run: stat-only polls, grown bytes parsed, new files found by a due walk."""
from __future__ import annotations

import os
import time

import pytest
from dump_files import line_of, make_sample, write_dump

from loaders import schema as S
from loaders.index import ondisk
from loaders.serve import catalog as catalog_module
from loaders.serve import follow as follow_module
from loaders.serve.catalog import Catalog
from loaders.serve.follow import Follower

RACY_S = 0.2  # the window after a write in which a stat is not trusted, shortened for tests


@pytest.fixture(autouse=True)
def short_racy_window(monkeypatch):
    monkeypatch.setattr(ondisk, "RACY_NS", int(RACY_S * 1e9))


def _age(root) -> None:
    """Wait until the files' last writes are out of the racy window."""
    time.sleep(RACY_S + 0.05)


@pytest.fixture
def counted(monkeypatch):
    """Counts of dir walks, os.stat calls and parsed chunks while the test runs."""
    counts = {"walks": 0, "stats": 0, "chunks": 0, "follows": 0, "stat_paths": []}
    real_follow = Catalog.follow

    def follow(self, *args, **kwargs):
        counts["follows"] += 1
        return real_follow(self, *args, **kwargs)

    real_scan, real_stat = catalog_module.walk_dir, os.stat
    pool = __import__("loaders.index.pool", fromlist=["scan_chunk"])
    real_chunk = pool.scan_chunk

    def walked(base):
        counts["walks"] += 1
        return real_scan(base)

    def stat(path, *args, **kwargs):
        counts["stats"] += 1
        counts["stat_paths"].append(str(path))
        return real_stat(path, *args, **kwargs)

    def chunk(c):
        counts["chunks"] += 1
        return real_chunk(c)

    monkeypatch.setattr(catalog_module, "walk_dir", walked)
    monkeypatch.setattr(Catalog, "follow", follow)
    monkeypatch.setattr(follow_module.os, "stat", stat)
    monkeypatch.setattr(pool, "scan_chunk", chunk)
    return counts


def _settled(follower: Follower):
    """Poll until a poll does nothing but stats (the racy window of fresh states passed)."""
    follower.poll()
    return follower.poll()


def test_idle_poll_stats_the_known_files_and_walks_nothing(dump_dir, counted):
    _age(dump_dir)
    catalog = Catalog(dump_dir)
    run = catalog.run(dump_dir)
    follower = Follower(catalog, dump_dir)
    _settled(follower)
    before = dict(counted, stat_paths=len(counted["stat_paths"]))
    for _ in range(5):
        beat = follower.poll()
    assert beat.run is run and not beat.walked
    assert counted["walks"] == before["walks"] and counted["follows"] == before["follows"]
    assert counted["chunks"] == before["chunks"]
    # one stat per known file (and alerts.toml, whose change a refresh would pick up) a poll
    stat_paths = counted["stat_paths"][before["stat_paths"]:]
    known = {str(dump_dir / rel) for rel in run.files} | {str(dump_dir / "alerts.toml")}
    assert len(stat_paths) == 5 * len(known) and set(stat_paths) == known


def test_appended_lines_appear_after_one_poll(dump_dir, counted):
    follower = _settled_follower(dump_dir)
    walks = counted["walks"]
    path = dump_dir / "rollout_data_rank_1.jsonl"
    with open(path, "ab") as handle:
        handle.write(line_of(make_sample(3, seed=5)) + line_of(make_sample(3, seed=6))
                     + line_of(make_sample(4, seed=7))[:30])  # a half-written third line
    beat = follower.poll()
    assert beat.run.steps == [0, 1, 2, 3]
    assert beat.run.cache == "partial" and beat.run.pending_bytes == 30
    assert counted["walks"] == walks  # the file set is known: no walk
    assert follower.catalog.run(dump_dir) is beat.run  # every session now reads the grown run
    assert beat.last_write_ns == path.stat().st_mtime_ns
    with open(path, "ab") as handle:
        handle.write(line_of(make_sample(4, seed=7))[30:])
    assert follower.poll().run.steps == [0, 1, 2, 3, 4]


def test_a_new_file_is_found_by_the_due_walk_only(dump_dir, counted):
    _age(dump_dir)
    catalog = Catalog(dump_dir)
    catalog.run(dump_dir)
    follower = Follower(catalog, dump_dir, walk_every=3600)
    _settled(follower)
    write_dump(dump_dir / "rollout_data_rank_2.jsonl", [make_sample(5, seed=1)])
    _age(dump_dir)
    walks = counted["walks"]
    assert 5 not in follower.poll().run.steps  # not known yet, and no walk due
    assert counted["walks"] == walks
    beat = follower.poll(walk=True)
    assert beat.walked and counted["walks"] == walks + 1
    assert 5 in beat.run.steps and "rollout_data_rank_2.jsonl" in beat.run.files


def test_walk_is_due_after_walk_every(dump_dir, counted):
    catalog = Catalog(dump_dir)
    catalog.run(dump_dir)
    follower = Follower(catalog, dump_dir, walk_every=0.0)
    walks = counted["walks"]
    assert follower.poll().walked and counted["walks"] == walks + 1


def _settled_follower(dump_dir):
    """A Follower of dump_dir's run, its files aged past the racy window and its first
    polls done: what a poll finds next is only what the test changes."""
    _age(dump_dir)
    catalog = Catalog(dump_dir)
    catalog.run(dump_dir)
    follower = Follower(catalog, dump_dir)
    _settled(follower)
    return follower


def test_a_file_replaced_under_the_board_is_read_again(dump_dir):
    follower = _settled_follower(dump_dir)
    path = dump_dir / "rollout_data_rank_0.jsonl"
    replacement = [make_sample(step, n=4 + i, seed=i, reward=9.0)
                   for step in range(3) for i in range(4)]
    write_dump(dump_dir / "new.tmp", replacement)
    os.replace(dump_dir / "new.tmp", path)  # same size class, new inode: rename over it
    run = follower.poll().run
    rows = run.samples[run.samples[S.FILE] == path.name]
    assert len(rows) == 12 and (rows[S.REWARD] == 9.0).all()


def test_a_same_size_rewrite_with_the_old_mtime_is_read_again(dump_dir):
    follower = _settled_follower(dump_dir)
    path = dump_dir / "rollout_data_rank_0.jsonl"
    stat = path.stat()
    data = path.read_bytes()
    old = b'"ref_reward":0.25'
    path.write_bytes(data.replace(old, b'"ref_reward":0.75', 1))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the ctime still moves
    run = follower.poll().run
    assert sorted(run.samples[S.REF_REWARD].unique().tolist()) == [0.25, 0.75]


def test_a_fresh_write_is_rechecked_until_its_stat_can_be_trusted(dump_dir, counted):
    catalog = Catalog(dump_dir)  # files written just now: inside the racy window
    catalog.run(dump_dir)
    follower = Follower(catalog, dump_dir)
    follower.poll()
    assert counted["follows"] == 1  # inside the window: the stat alone cannot tell
    walks = counted["walks"]
    _age(dump_dir)
    follower.poll()  # re-checked by content once out of the window, then trusted
    chunks, follows = counted["chunks"], counted["follows"]
    beat = follower.poll()
    assert counted["walks"] == walks and counted["chunks"] == chunks
    assert counted["follows"] == follows == 2
    assert beat.run is catalog.run(dump_dir)


def test_shared_polls_within_min_gap(dump_dir):
    catalog = Catalog(dump_dir)
    catalog.run(dump_dir)
    first = follow_module.follower(catalog, dump_dir, min_gap=60)
    assert follow_module.follower(catalog, dump_dir) is first
    assert first.poll() is first.poll()


def test_growth_is_parsed_without_starting_worker_processes(dump_dir, monkeypatch):
    follower = _settled_follower(dump_dir)
    pool = __import__("loaders.index.pool", fromlist=["INLINE_BYTES"])
    monkeypatch.setattr(pool, "INLINE_BYTES", 0)  # the load's own rule would start workers

    def no_workers(*args, **kwargs):
        raise AssertionError("worker processes started for a live run's growth")

    monkeypatch.setattr(pool, "ProcessPoolExecutor", no_workers)
    with open(dump_dir / "rollout_data_rank_0.jsonl", "ab") as handle:
        handle.write(line_of(make_sample(7, seed=1)))
    assert 7 in follower.poll().run.steps


def test_the_index_is_saved_at_most_every_save_every_and_once_things_go_quiet(dump_dir,
                                                                              monkeypatch):
    _age(dump_dir)
    catalog = Catalog(dump_dir)
    catalog.run(dump_dir)
    saves = []
    grow = __import__("loaders.serve.grow", fromlist=["save_index"])
    for name in ("save_index", "save_kept"):  # a save of a followed run, and of its growth
        real = getattr(grow, name)
        monkeypatch.setattr(grow, name, lambda root, stored, real=real: saves.append(
            len(stored.frame)) or real(root, stored))
    follower = Follower(catalog, dump_dir, save_every=3600)
    _settled(follower)
    path = dump_dir / "rollout_data_rank_0.jsonl"
    for step in (3, 4, 5):
        with open(path, "ab") as handle:
            handle.write(line_of(make_sample(step, seed=1)))
        assert step in follower.poll().run.steps
    assert saves == [25]  # the first growth only: a save rewrites the whole index
    follower.save_every = 0.0
    _age(dump_dir)
    follower.poll()  # quiet: the last growth's index is written now
    assert saves == [25, 27]
    reopened = Catalog(dump_dir).run(dump_dir)
    assert reopened.cache == "hit" and reopened.steps == [0, 1, 2, 3, 4, 5]
