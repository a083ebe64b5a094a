"""Inputs a review found that used to crash or mislead; each stays fixed."""
import os

import format_fixtures as F
import metric_fixtures as M
import numpy as np
import pandas as pd
import pytest
from apptest import board, errors, texts
from dump_files import line_of, make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.find.walk import discover
from loaders.health.robust import deviation
from loaders.index.refresh import refresh
from loaders.parse.record import BadLine, parse_step
from loaders.serve.catalog import Catalog


def test_infinite_reward_does_not_break_the_responses_page(tmp_path):
    path = tmp_path / "rollout_data_rank_0.jsonl"
    path.write_text('{"step": 0, "response": "a", "reward": 0.5}\n'
                    '{"step": 0, "response": "b", "reward": Infinity}\n')
    at = board(tmp_path, page="responses")
    assert not at.exception and len(at.dataframe[0].value) == 2


def test_file_deleted_after_discovery_is_left_out(dump_dir):
    files = discover(dump_dir)
    (dump_dir / "rollout_data_rank_1.jsonl").unlink()
    stored, _ = refresh(files, None)
    assert set(stored.files) == {"rollout_data_rank_0.jsonl"}


def test_file_names_that_are_not_utf8_are_skipped(tmp_path):
    write_dump(tmp_path / "ok" / "rollout_data_rank_0.jsonl", [make_sample(0)])
    bad = os.path.join(os.fsencode(tmp_path), b"r\xe9sultats")
    os.makedirs(bad)
    with open(os.path.join(bad, b"rollout_data_rank_0.jsonl"), "wb") as handle:
        handle.write(line_of(make_sample(1)))
    run = open_run(tmp_path)
    assert run.steps == [0] and list(run.formats) == ["ok/rollout_data_rank_0.jsonl"]


@pytest.mark.parametrize("step", [2**64 - 1, 10**30, float(2**70)])
def test_steps_out_of_range_are_bad_lines(step):
    with pytest.raises(BadLine, match="out of range"):
        parse_step(step)


def test_huge_integers_in_fields_are_problems_not_crashes(tmp_path):
    path = tmp_path / "rollout_data_rank_0.jsonl"
    zeros = "0" * 400
    path.write_text(f'{{"step": 1, "response": "a", "reward": 1{zeros}, "extra": 2{zeros}}}\n')
    run = open_run(tmp_path)
    assert len(run.samples) == 1 and np.isnan(run.samples[S.REWARD].iloc[0])
    assert {p["reason"].split(":")[0] for p in run.problems} == {"reward", "extra"}


def test_odd_step_in_the_url_falls_back(dump_dir):
    at = board(dump_dir, step="²")
    assert not errors(at) and at.sidebar.select_slider(key="step").value == 2


def test_symlinked_file_outside_the_dump_is_not_read(tmp_path):
    outside = write_dump(tmp_path / "outside" / "x.jsonl", [make_sample(0, prompt="SECRET")])
    run_dir = tmp_path / "root" / "run"
    write_dump(run_dir / "rollout_data_rank_0.jsonl", [make_sample(1)])
    (run_dir / "rollout_data_rank_1.jsonl").symlink_to(outside)
    inner = write_dump(run_dir / "real" / "y.jsonl", [make_sample(2)])
    (run_dir / "rollout_data_rank_2.jsonl").symlink_to(inner)
    run = open_run(run_dir)
    prompts = run.with_previews(run.samples)[S.PROMPT]
    assert "SECRET" not in " ".join(prompts) and run.steps == [1, 2]


def test_baseline_needs_only_min_history_steps():
    values = pd.Series([1.0, 1.1, 0.9, 1.0, 1.05, 100.0])
    assert deviation(values, window=20, min_history=5).iloc[5] > 5


def test_zero_variance_needs_enough_groups(tmp_path):
    samples = [make_sample(0, prompt="p", reward=1.0), make_sample(0, prompt="p", reward=1.0)]
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", samples)
    run = open_run(tmp_path)
    assert not [a for a in run.health().alerts if a.rule == "zero_variance_groups"]


def test_alerts_toml_edits_apply_and_broken_files_are_reported(tmp_path):
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", [make_sample(s) for s in range(60)])
    M.write_verl_file(tmp_path / "logs" / "metrics.jsonl", M.faulty())
    catalog = Catalog(tmp_path)  # a run is a snapshot: edits show after a refresh
    assert any(a.rule == "batch_runaway" for a in catalog.run(tmp_path).health().alerts)
    (tmp_path / "alerts.toml").write_text("[batch_runaway]\nk = 1000\n")
    catalog.refresh()
    assert not any(a.rule == "batch_runaway" for a in catalog.run(tmp_path).health().alerts)
    (tmp_path / "alerts.toml").write_text("[batch_runaway\n")
    catalog.refresh()
    health = catalog.run(tmp_path).health()
    assert any("alerts.toml ignored" in note for note in health.metrics.notes)
    at = board(tmp_path, page="alerts")
    assert not at.exception and "alerts.toml ignored" in texts(at)


def test_metric_names_are_shown_as_text(tmp_path):
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", [make_sample(1), make_sample(2)])
    name = "x` ![](http://example.invalid/p.png)"
    M.write_verl_file(tmp_path / "m.jsonl", [{name: 1.0}, {name: 2.0}])
    at = board(tmp_path, page="metrics")
    assert name in [t.value for t in at.text]
    assert not any("example.invalid" in m.value for m in at.markdown)


def test_trl_step_texts_read_each_file_once(tmp_path, monkeypatch):
    from loaders.serve import sample

    run = open_run(F.trl(tmp_path / "trl"))
    calls = []
    real = sample.read_checked  # a dump file's rows, read whole under the budgets
    monkeypatch.setattr(sample, "read_checked", lambda *a, **k: calls.append(a) or real(*a, **k))
    texts_by_key = run.step_texts(10)
    assert len(texts_by_key) == 3 and len(calls) == 1
