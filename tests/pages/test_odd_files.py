"""Odd files beside a dump: FIFOs, devices, links out of the dir or in a loop, files gone
before they are read, numbers too large for a float.  Each is a note naming the file (or
is left out), never a hang or a crash.  Every call runs under a timeout: a regression fails."""
from __future__ import annotations

import io
import json
import os
import threading
from contextlib import redirect_stdout
from pathlib import Path

import metric_fixtures as M
import numpy as np
import orjson
import pytest
from dump_files import make_sample, write_dump

from loaders import schema as S
from loaders.__main__ import main
from loaders.health.check import check
from loaders.health.config import DEFAULTS
from loaders.metrics import find_metric_files, load_metrics
from loaders.metrics.lines import from_console, from_json, from_roll
from loaders.serve.catalog import Catalog
from loaders.serve.open_run import DumpError, open_run
from pages.figures.metrics import metric_chart

WAIT = 20.0


def timed(work, wait: float = WAIT):
    """work()'s result, or a failure (not a hang) when it does not return in time."""
    box: dict = {}

    def body() -> None:
        try:
            box["value"] = work()
        except BaseException as err:  # noqa: BLE001  (raised below, in the test's thread)
            box["error"] = err

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    thread.join(wait)
    assert not thread.is_alive(), "hung"
    if "error" in box:
        raise box["error"]
    return box["value"]


def _run_dir(root: Path, steps: int = 8) -> Path:
    write_dump(root / "rollout_data_rank_0.jsonl", [make_sample(s) for s in range(3)])
    M.write_verl_file(root / "logs" / "metrics.jsonl", M.healthy(steps))
    return root


def _notes(root: Path) -> list[str]:
    return timed(lambda: open_run(root, use_cache=False).health()).metrics.notes


def _cli_alerts(root: Path) -> tuple[int, list]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = timed(lambda: main([str(root), "--alerts", "--json", "--no-cache"]))
    return code, orjson.loads(out.getvalue()) if code == 0 else None


def test_a_fifo_named_train_log_is_a_note(tmp_path):
    root = _run_dir(tmp_path / "run")
    os.mkfifo(root / "train.log")
    notes = _notes(root)
    assert [n for n in notes if "train.log" in n and "not a regular file" in n]
    assert timed(lambda: load_metrics(root)).frame.index.max() == 8  # the rest is read
    assert _cli_alerts(root)[0] == 0


@pytest.mark.parametrize("swap", ["fifo", "dev_zero", "deleted"])
def test_a_metric_file_changed_after_the_run_was_opened(tmp_path, swap):
    root = _run_dir(tmp_path / "run")
    M.write_verl_console(root / "train.log", M.healthy(4, seed=1))
    run = open_run(root, use_cache=False)
    target = root / "logs" / "metrics.jsonl"
    assert target in run.metric_files  # found when opened, read when health is asked
    target.unlink()
    if swap == "fifo":  # opening a FIFO blocks until a writer comes: it never does
        os.mkfifo(target)
    elif swap == "dev_zero":  # an endless read without a newline
        os.symlink("/dev/zero", target)
    health = timed(run.health)
    reason = "removed after it was found" if swap == "deleted" else "not a regular file"
    assert [n for n in health.metrics.notes if str(target) in n and reason in n]
    assert health.metrics.frame.index.max() == 4  # train.log still counts


def test_symlink_loops_are_left_out(tmp_path):
    root = _run_dir(tmp_path / "run")
    extra = tmp_path / "extra"
    M.write_verl_console(extra / "more.log", M.healthy(3))
    for name in ("loop.log", "loop.jsonl", "events.out.tfevents.1.host"):
        os.symlink(extra / name, extra / name)
    os.symlink(root / "dir_loop", root / "dir_loop")
    assert list(timed(lambda: find_metric_files(extra))) == [extra / "more.log"]
    assert timed(lambda: load_metrics(extra)).frame.index.max() == 3
    run = timed(lambda: Catalog(root).run(root))
    assert run.health(str(extra)).metrics.frame.index.max() == 8
    assert _cli_alerts(root)[0] == 0


def test_a_metric_log_in_a_loop_beside_the_dumps_is_never_a_traceback(tmp_path):
    root = _run_dir(tmp_path / "run")
    os.symlink(root / "loop.log", root / "loop.log")
    try:  # the walk may skip the link (then the run loads) or refuse the dir in one line
        run = timed(lambda: Catalog(root).run(root))
    except DumpError as err:
        assert "\n" not in str(err) and "loop" in str(err).lower()
    else:
        assert timed(run.health).metrics.frame.index.max() == 8
    assert _cli_alerts(root)[0] == 0


@pytest.mark.parametrize("make, reason", [
    (lambda p: os.mkfifo(p), "not a regular file"),
    (lambda p: p.mkdir(), "alerts.toml ignored"),
    (lambda p: os.symlink("/dev/zero", p), "outside the run dir"),
    (lambda p: os.symlink(p, p), "cannot read"),
    (lambda p: p.write_text("# padding\n" * ((1 << 20) // 10 + 1)), "larger than"),
    (lambda p: p.write_bytes(b"[divergence]\nk = 6\n\xff\xfe"), "not UTF-8"),
    (lambda p: p.write_text("a = " + "[" * 50_000 + "]" * 50_000), "not valid TOML"),
    (lambda p: p.write_text("[divergence]\nk = 1" + "0" * 5000 + "\n"), "not valid TOML"),
], ids=["fifo", "dir", "dev_zero", "loop", "huge", "binary", "deep", "long_int"])
def test_an_odd_alerts_toml_is_a_note_and_the_defaults_apply(tmp_path, make, reason):
    root = _run_dir(tmp_path / "run")
    make(root / "alerts.toml")
    health = timed(lambda: open_run(root, use_cache=False).health())
    assert [n for n in health.metrics.notes if "alerts.toml" in n and reason in n]
    assert health.config == DEFAULTS
    assert _cli_alerts(root)[0] == 0


def test_alerts_toml_links_are_followed_only_inside_the_run_dir(tmp_path):
    root = _run_dir(tmp_path / "run")
    (tmp_path / "outside.toml").write_text("[divergence]\nk = 9.0\n")
    os.symlink(tmp_path / "outside.toml", root / "alerts.toml")
    health = timed(lambda: check(root, None))
    assert health.config["divergence"]["k"] == 5.0
    assert [n for n in health.metrics.notes if "outside the run dir" in n]
    (root / "conf").mkdir()
    (root / "conf" / "alerts.toml").write_text("[divergence]\nk = 7.0\n")
    (root / "alerts.toml").unlink()
    os.symlink(root / "conf" / "alerts.toml", root / "alerts.toml")
    health = timed(lambda: check(root, None))
    assert health.config["divergence"]["k"] == 7.0 and not health.metrics.notes
    # a file named on purpose (--alerts-config) is read wherever it is
    explicit = timed(lambda: check(root, None, config_path=tmp_path / "outside.toml"))
    assert explicit.config["divergence"]["k"] == 9.0


BIG_INT = "1" + "0" * 400


def _big_values(root: Path) -> Path:
    lines = ['{"step": 1, "loss": 1e400, "ok": 1}', f'{{"step": 2, "loss": {BIG_INT}, "ok": 2}}',
             '{"step": 3, "loss": -1e400, "ok": 3}', '{"step": 4, "loss": NaN, "ok": 4}',
             f'{{"step": {BIG_INT}, "loss": 5}}', '{"step": 5, "loss": 0.5, "ok": 5}']
    (root / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    return root


def test_numbers_beyond_a_float_are_non_finite_or_left_out_with_a_note(tmp_path):
    root = _big_values(_run_dir(tmp_path / "run"))
    run = timed(lambda: open_run(root, use_cache=False))
    assert run.formats["metrics.jsonl"] == "metrics"
    health = timed(run.health)
    loss = health.metrics.frame["loss"]
    assert loss[1] == float("inf") and loss[3] == float("-inf") and loss[5] == 0.5
    assert loss.isna()[[2, 4]].all() and health.metrics.frame["ok"][2] == 2.0
    assert [n for n in health.metrics.notes
            if "metrics.jsonl" in n and "2 value(s) too large" in n and "loss" in n]
    chart = metric_chart(health.metrics.frame, "loss")  # non-finite points are not drawn
    assert chart.data["value"].tolist() == [0.5]
    assert _cli_alerts(root)[0] == 0


def test_huge_numbers_in_each_log_format():
    dropped: list[str] = []
    assert from_json({"step": 1, "data": {"a": int(BIG_INT), "b": 1e400}}, dropped) == (
        1, None, {"b": float("inf")})
    assert dropped == ["a"]
    assert from_json({"step": int(BIG_INT), "a": 1}) is None
    assert from_console(f"step:3 - a:{BIG_INT} - b:nan - c:2") == (3, None, {
        "a": float("inf"), "c": 2.0})
    assert from_console(f"step:{BIG_INT} - a:1") is None
    roll = f'metrics_tag: {{"step": 2, "metrics": {{"a": {BIG_INT}, "b": 1}}}}'
    assert from_roll(roll) == (2, None, {"b": 1.0})
    # an int past int()'s digit limit is read as text (parse.repair), so it is no metric
    assert from_roll('metrics_tag: {"step": 2, "metrics": {"a": 1' + "0" * 5000 + "}}") == (
        2, None, {})


def test_non_finite_metrics_reach_the_rules_without_a_crash(tmp_path):
    rows = M.faulty()
    for step in (10, 11, 40):
        rows[step - 1].update({key: float("inf") for key in rows[step - 1]})
    rows[20]["actor/ppo_kl"] = float("-inf")
    # Python's json writes Infinity (orjson would write null): what a trainer's logger does
    (tmp_path / "metrics.jsonl").write_text("".join(
        json.dumps({"step": i + 1, "data": row}) + "\n" for i, row in enumerate(rows)))
    health = timed(lambda: check(tmp_path, None))
    assert np.isinf(health.signals[S.H_KL]).sum() == 4  # kept: a blown-up KL is news
    assert health.alerts and all(isinstance(a.as_dict(), dict) for a in health.alerts)
    orjson.dumps([a.as_dict() for a in health.alerts])  # the CLI's output stays JSON


@pytest.mark.parametrize("page", ["metrics", "health", "alerts"])
def test_pages_show_non_finite_and_dropped_values_without_an_error(tmp_path, page):
    from apptest import board, errors, texts

    root = _big_values(_run_dir(tmp_path / "run"))
    (root / "alerts.toml").write_text("[divergence]\nk = inf\n")
    os.mkfifo(root / "train.log")
    at = timed(lambda: board(root, page=page), wait=120)
    shown = texts(at)
    assert not errors(at) and "train.log: not read (not a regular file)" in shown
    assert "divergence.k = inf ignored" in shown and "too large for a number" in shown
