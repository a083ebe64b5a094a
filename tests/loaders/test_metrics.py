"""Training metrics from every source format, written by the tests."""
import sys
import types

import metric_fixtures as M
import pytest

from loaders.metrics import find_metric_files, load_metrics
from loaders.metrics import lines as L
from loaders.metrics.tensorboard import MISSING

WRITERS = {"verl_file": (M.write_verl_file, "metrics.jsonl", "jsonl"),
           "verl_console": (M.write_verl_console, "train.log", "log"),
           "roll": (M.write_roll_log, "logs/roll.log", "log"),
           "prime": (M.write_prime, "metrics.jsonl", "jsonl")}


@pytest.mark.parametrize("source", sorted(WRITERS))
def test_each_source_gives_every_metric_per_step(tmp_path, source):
    write, name, kind = WRITERS[source]
    rows = M.healthy(10)
    write(tmp_path / name, rows)
    metrics = load_metrics(tmp_path)
    assert list(metrics.sources.values()) == [kind]
    assert list(metrics.frame.index) == list(range(1, 11))
    for key in ("actor/ppo_kl", "timing_s/gen", "perf/max_memory_reserved_gb"):
        expected = [r[key] for r in rows]
        assert metrics.frame[key].tolist() == pytest.approx(expected, rel=1e-5)


def test_prime_metrics_keep_wall_time(tmp_path):
    M.write_prime(tmp_path / "metrics.jsonl", M.healthy(3))
    frame = load_metrics(tmp_path).frame
    assert frame["time"].tolist() == [1_700_000_000.0, 1_700_000_060.0, 1_700_000_120.0]


def test_generic_flat_dicts_with_another_step_key(tmp_path):
    M.write_generic(tmp_path / "log.jsonl", M.healthy(4))
    frame = load_metrics(tmp_path).frame
    assert list(frame.index) == [1, 2, 3, 4] and "actor.grad_norm" in frame


def test_dumps_are_not_metrics(tmp_path, dump_dir):
    M.write_verl_file(dump_dir / "metrics.jsonl", M.healthy(3))
    assert set(map(str, find_metric_files(dump_dir))) == {str(dump_dir / "metrics.jsonl")}


def test_console_line_parsing():
    point = L.from_console("(pid=1) step:7 - actor/kl:0.01 - critic/score/mean:-1.5e-2 - "
                           "timing_s/gen:12 - note:abc")
    assert point == (7, None, {"actor/kl": 0.01, "critic/score/mean": -0.015,
                               "timing_s/gen": 12.0})
    assert L.from_console("no step here") is None


def test_roll_line_parsing_and_nested_metrics():
    line = 'I1121 10:00 x.py:1] metrics_tag: {"step": 3, "metrics": {"a": {"b": 2}, "c": "x"}}'
    assert L.from_roll(line) == (3, None, {"a/b": 2.0})
    assert L.from_roll("metrics_tag: {broken") is None


def test_non_finite_and_non_numeric_values_are_dropped():
    assert L.from_json({"step": 1, "a": float("nan"), "b": True, "c": 2}) == (1, None,
                                                                             {"c": 2.0})


def test_later_values_win_and_sources_merge(tmp_path):
    M.write_verl_file(tmp_path / "a.jsonl", [{"x": 1.0}, {"x": 2.0}])
    M.write_prime(tmp_path / "b" / "metrics.jsonl", [{"y": 5.0}])
    frame = load_metrics(tmp_path).frame
    assert frame.loc[1, "x"] == 1.0 and frame.loc[1, "y"] == 5.0 and frame.loc[2, "x"] == 2.0


def test_tensorboard_without_the_package_says_so(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    monkeypatch.setitem(sys.modules, "tensorboard.backend", None)
    monkeypatch.setitem(sys.modules, "tensorboard.backend.event_processing", None)
    monkeypatch.setitem(sys.modules,
                        "tensorboard.backend.event_processing.event_accumulator", None)
    (tmp_path / "events.out.tfevents.123.host").write_bytes(b"\x00")
    metrics = load_metrics(tmp_path)
    assert metrics.notes == [MISSING] and metrics.empty


def test_tensorboard_scalars_when_installed(tmp_path, monkeypatch):
    event = types.SimpleNamespace

    class Accumulator:
        def __init__(self, path, size_guidance):
            self.path = path

        def Reload(self):  # noqa: N802 (TensorBoard's name)
            pass

        def Tags(self):  # noqa: N802
            return {"scalars": ["actor/entropy"]}

        def Scalars(self, tag):  # noqa: N802
            return [event(step=1, wall_time=10.0, value=1.5),
                    event(step=2, wall_time=20.0, value=1.4)]

    module = types.SimpleNamespace(EventAccumulator=Accumulator)
    monkeypatch.setitem(sys.modules, "tensorboard.backend.event_processing.event_accumulator",
                        module)
    (tmp_path / "events.out.tfevents.1.host").write_bytes(b"\x00")
    frame = load_metrics(tmp_path).frame
    assert frame["actor/entropy"].tolist() == [1.5, 1.4] and frame["time"].tolist() == [10, 20]
