"""Browser sessions share runs: at once they get consistent answers, and a slow load of one
dir holds up no load of another.  Every wait has a timeout so a regression fails, not hangs."""
import threading
from pathlib import Path

import metric_fixtures as M
import pytest
from dump_files import keyed, make_sample, write_dump

from loaders import schema as S
from loaders.serve import cache
from loaders.serve.catalog import Catalog

WAIT = 20.0


def _dump(root: Path, steps: int = 4, per_step: int = 6) -> Path:
    for rank in range(2):
        samples = [make_sample(step, n=4 + i, seed=rank * 10 + i, validation=i == 0)
                   for step in range(steps) for i in range(per_step)]
        write_dump(root / f"rollout_data_rank_{rank}.jsonl", samples)
    M.write_verl_file(root / "logs" / "metrics.jsonl", M.healthy(steps))
    return root


def _in_threads(count: int, work) -> list:
    """Run work(i) in count threads started together; their results, or the first error."""
    start, results, errors = threading.Barrier(count, timeout=WAIT), [None] * count, []

    def body(i: int) -> None:
        try:
            start.wait()
            results[i] = work(i)
        except BaseException as err:  # noqa: BLE001  (reported by the test below)
            errors.append(err)

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert not any(t.is_alive() for t in threads), "a session hung"
    if errors:
        raise errors[0]
    return results


def _session(run, keys: list[str], steps: list[int], rounds: int) -> list:
    """One session clicking around: samples, a step's texts, health and the parts."""
    seen = []
    for r in range(rounds):
        key, step = keys[(r * 7) % len(keys)], steps[r % len(steps)]
        sample = run.sample(key)
        texts = run.step_texts(step)
        part = run.part(r % 2 == 0)
        seen.append((key, sample.texts["response"], step, sorted(texts), id(run.health()),
                     id(part), id(part.health()), len(run.step_stats)))
    return seen


def test_two_sessions_share_one_run(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "MAX_SAMPLES", 5)  # tiny LRUs: evictions race with reads
    monkeypatch.setattr(cache, "MAX_TEXT_STEPS", 1)
    run = Catalog(_dump(tmp_path / "run")).run(tmp_path / "run")
    keys, steps = keyed(run)[S.KEY].tolist(), run.steps
    results = _in_threads(2, lambda i: _session(run, keys[i:] + keys[:i], steps, 60))
    expected = {k: r for k, r in zip(keys, run.with_previews(run.samples)[S.RESPONSE])}
    by_step = {s: sorted(run.step_rows(s)[S.KEY]) for s in steps}
    for seen in results:
        for key, response, step, text_keys, *_ in seen:
            assert response == expected[key] and text_keys == by_step[step]
    ids = {row[4:7] for seen in results for row in seen}
    assert len({i[0] for i in ids}) == 1  # one health object, computed once
    assert len({(i[1], i[2]) for i in ids}) == 2  # one part (with its health) per split


def test_a_step_larger_than_the_sample_cache_loads(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "MAX_SAMPLES", 3)
    run = Catalog(_dump(tmp_path / "run")).run(tmp_path / "run")
    samples = run.step_samples(run.steps[0])
    assert [s.key for s in samples] == run.step_rows(run.steps[0])[S.KEY].tolist()


class Gate:
    """A progress callback that holds its load until released."""

    def __init__(self) -> None:
        self.entered, self.release = threading.Event(), threading.Event()

    def __call__(self, done: int, total: int) -> None:
        self.entered.set()
        assert self.release.wait(WAIT), "never released"


@pytest.mark.parametrize("same_catalog", [True, False])
def test_a_blocked_load_does_not_block_another_dir(tmp_path, same_catalog):
    a, b = _dump(tmp_path / "base" / "a"), _dump(tmp_path / "base" / "b")
    first = Catalog(tmp_path / "base")
    second = first if same_catalog else Catalog(b)
    gate, loaded = Gate(), {}
    slow = threading.Thread(target=lambda: loaded.setdefault("a", first.run(a, gate)),
                            daemon=True)
    slow.start()
    try:
        assert gate.entered.wait(WAIT), "the load of a never reported progress"
        fast = threading.Thread(target=lambda: loaded.setdefault("b", second.run(b)),
                                daemon=True)
        fast.start()
        fast.join(WAIT)
        assert "b" in loaded and "a" not in loaded  # b finished while a was still held
        assert second.sub_runs() and second.run(b) is loaded["b"]
    finally:
        gate.release.set()
        slow.join(WAIT)
    assert loaded["a"].steps == [0, 1, 2, 3]


def test_the_same_dir_is_loaded_once_for_sessions_asking_together(tmp_path):
    root = _dump(tmp_path / "run")
    catalog = Catalog(root)
    runs = _in_threads(4, lambda i: catalog.run(root))
    assert all(r is runs[0] for r in runs)


def test_refresh_while_sessions_read(tmp_path):
    root = _dump(tmp_path / "run")
    catalog = Catalog(root)
    catalog.run(root)

    def work(i: int) -> int:
        for _ in range(10):
            if i == 0:
                catalog.refresh()
            run = catalog.run(root)
            run.health(), run.step_texts(run.steps[-1])
        return len(catalog.run(root).samples)

    assert set(_in_threads(3, work)) == {48}
