"""The catalog walks a dump dir once; after that a widget click touches no disk until
refresh(), which picks up appended lines, new files and edited alerts.toml."""
import os
from pathlib import Path

import metric_fixtures as M
import pytest
from dump_files import keyed, line_of, make_sample, write_dump

from loaders import schema as S
from loaders.metrics import find_metric_files
from loaders.serve.catalog import Catalog


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """Two sub-runs, training metrics (a jsonl file and a console log) and an alerts.toml."""
    root = tmp_path / "base"
    for name, seed in (("exp_a", 1), ("exp_b", 2)):
        write_dump(root / name / "rollout_data_rank_0.jsonl",
                   [make_sample(s, seed=seed) for s in range(3)])
    M.write_verl_file(root / "logs" / "metrics.jsonl", M.healthy(5))
    M.write_verl_console(root / "exp_a" / "train.log", M.healthy(4, seed=1))
    (root / "alerts.toml").write_text("[batch_runaway]\nk = 10\n")
    return root


class DiskCalls:
    """Counts walks and stats of paths under a dir, through the os functions pathlib and
    os.walk use, so no code path can look at the disk without being seen."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, under: Path) -> None:
        self.calls: list[tuple[str, str]] = []
        for name in ("walk", "scandir", "listdir", "stat", "lstat"):
            monkeypatch.setattr(os, name, self._counting(name, getattr(os, name), str(under)))

    def _counting(self, name, real, under):
        def wrapper(path=".", *args, **kwargs):
            if str(os.fspath(path) if not isinstance(path, int) else "").startswith(under):
                self.calls.append((name, str(path)))
            return real(path, *args, **kwargs)
        return wrapper


def click(catalog: Catalog, base: Path, metrics: Path) -> tuple:
    """What one rerun of the board asks of the data layer."""
    runs = catalog.sub_runs()
    run = catalog.run(base / "exp_a")
    whole = catalog.run(base)
    return (runs, run, run.health(), whole.health(str(metrics)), whole.part(False).health(),
            run.step_stats)


def test_no_walk_or_stat_after_the_first_load(base, tmp_path, monkeypatch):
    extra = tmp_path / "extra"
    M.write_verl_console(extra / "more.log", M.healthy(2))
    catalog = Catalog(base)
    first = click(catalog, base, extra)
    assert first[0] == ["exp_a", "exp_b"]
    disk = DiskCalls(monkeypatch, tmp_path)
    for _ in range(5):
        again = click(catalog, base, extra)
        assert all(a is b for a, b in zip(again[1:], first[1:]))
    assert disk.calls == []
    catalog.refresh()  # and the counter does see the disk being looked at
    assert {"scandir", "stat"} <= {name for name, _ in disk.calls}


def test_run_metric_files_match_a_walk(base):
    run = Catalog(base).run(base)
    assert list(run.metric_files.items()) == list(find_metric_files(base).items())
    assert set(run.health().metrics.sources.values()) == {"jsonl", "log"}


def test_refresh_picks_up_lines_files_metrics_and_alerts(base):
    catalog = Catalog(base)
    run_a, whole = catalog.run(base / "exp_a"), catalog.run(base)
    health = whole.health()
    with open(base / "exp_a" / "rollout_data_rank_0.jsonl", "ab") as handle:
        handle.write(line_of(make_sample(3, seed=1)))
    write_dump(base / "exp_c" / "rollout_data_rank_0.jsonl", [make_sample(0, seed=3)])
    with open(base / "logs" / "metrics.jsonl", "ab") as handle:
        handle.write(line_of({"step": 6, "data": M.healthy(6)[-1]}))
    (base / "alerts.toml").write_text("[batch_runaway]\nk = 1000\n")
    assert catalog.run(base / "exp_a") is run_a and "exp_c" not in catalog.sub_runs()
    catalog.refresh()
    fresh_a, fresh = catalog.run(base / "exp_a"), catalog.run(base)
    assert len(fresh_a.samples) == len(run_a.samples) + 1 and fresh_a.cache == "partial"
    assert "exp_c" in catalog.sub_runs()
    assert len(fresh.samples) == len(whole.samples) + 2
    assert fresh.health().metrics.frame.index.max() == 6 == health.metrics.frame.index.max() + 1
    assert fresh.health().config["batch_runaway"]["k"] == 1000 != health.config[
        "batch_runaway"]["k"]


def test_refresh_keeps_unchanged_runs_with_their_caches(base):
    catalog = Catalog(base)
    run = catalog.run(base / "exp_b")
    health = run.health()
    catalog.refresh()
    assert catalog.run(base / "exp_b") is run and run.health() is health


def test_refresh_notices_a_new_metric_file(base):
    catalog = Catalog(base)
    before = catalog.run(base / "exp_b").health()
    M.write_verl_console(base / "exp_b" / "train.log", M.healthy(3))
    catalog.refresh()
    after = catalog.run(base / "exp_b").health()
    assert before.metrics.empty and list(after.metrics.frame.index) == [1, 2, 3]


def test_refresh_notices_changes_under_an_extra_metrics_path(base, tmp_path):
    extra = tmp_path / "extra"
    M.write_verl_console(extra / "more.log", M.healthy(2))
    catalog = Catalog(base)
    assert catalog.run(base / "exp_b").health(str(extra)).metrics.frame.index.max() == 2
    M.write_verl_console(extra / "more.log", M.healthy(3))
    catalog.refresh()
    assert catalog.run(base / "exp_b").health(str(extra)).metrics.frame.index.max() == 3


def test_load_errors_are_remembered_until_refresh(tmp_path, monkeypatch):
    catalog = Catalog(tmp_path)
    with pytest.raises(Exception, match="no .jsonl dump files"):
        catalog.run(tmp_path)
    disk = DiskCalls(monkeypatch, tmp_path)
    with pytest.raises(Exception, match="no .jsonl dump files"):
        catalog.run(tmp_path)
    assert disk.calls == [] and catalog.sub_runs() == []
    monkeypatch.undo()
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", [make_sample(0)])
    catalog.refresh()
    assert len(catalog.run(tmp_path).samples) == 1 and catalog.sub_runs() == ["."]


def test_dirs_outside_the_base_or_hidden_are_walked_themselves(base, tmp_path):
    other = tmp_path / "other"
    write_dump(other / "rollout_data_rank_0.jsonl", [make_sample(7)])
    write_dump(base / ".hidden" / "rollout_data_rank_0.jsonl", [make_sample(8)])
    catalog = Catalog(base)
    assert catalog.run(other).steps == [7]
    assert catalog.run(base / ".hidden").steps == [8]
    assert ".hidden" not in catalog.sub_runs()


def test_sub_run_listing_matches_its_own_walk(base):
    catalog = Catalog(base)
    via_base = catalog.run(base / "exp_a")
    alone = Catalog(base / "exp_a").run(base / "exp_a")
    assert via_base.files == alone.files and via_base.metric_files == alone.metric_files
    assert keyed(via_base)[S.KEY].tolist() == keyed(alone)[S.KEY].tolist()
