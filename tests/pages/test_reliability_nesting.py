"""A deeply nested record is one record left out, never a RecursionError that ends the load:
in a metrics file (the CLI, --alerts and the board's Metrics page), and in a dump's extra
field given to `loaders convert`, which also never leaves a half-written output."""
import html
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from apptest import board
from dump_files import ROOT, line_of, make_sample

from loaders import open_run
from loaders.metrics.collect import load_metrics
from loaders.writer.convert import convert
from loaders.writer.parquet import ParquetSink

DEPTH = 990  # under orjson's parse limit (1024), over Python's recursion limit (1000)
DEEP = b'{"a": ' * DEPTH + b"1" + b"}" * DEPTH
REASON = "over budget: nesting depth"


def _run_with_deep_metrics(root: Path) -> Path:
    root.mkdir()
    (root / "rollout_data_rank_0.jsonl").write_bytes(
        b"".join(line_of(make_sample(s, seed=i)) for s in range(3) for i in range(2)))
    lines = [orjson.dumps({"step": s, "data": {"actor/loss": 0.1 * s}}) for s in range(4)]
    lines.insert(2, b'{"step": 9, "data": ' + DEEP + b"}")
    (root / "metrics.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return root


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "loaders", *args], cwd=ROOT,
                          capture_output=True, timeout=120)


def test_a_deep_metric_record_is_left_out_and_named(tmp_path):
    root = _run_with_deep_metrics(tmp_path / "run")
    metrics = load_metrics(root)
    assert list(metrics.frame.index) == [0, 1, 2, 3]
    assert metrics.notes == [f"{root / 'metrics.jsonl'}: 1 record(s) left out "
                             f"({REASON} 201 > 200)"]


def test_the_cli_and_alerts_load_a_run_with_a_deep_metric_record(tmp_path):
    root = _run_with_deep_metrics(tmp_path / "run")
    summary = _cli(str(root), "--json")
    assert summary.returncode == 0, summary.stderr.decode()[-2000:]
    assert orjson.loads(summary.stdout)["samples"] == 6
    alerts = _cli(str(root), "--alerts", "--json")
    assert alerts.returncode == 0, alerts.stderr.decode()[-2000:]
    assert isinstance(orjson.loads(alerts.stdout), list)


def test_the_metrics_page_shows_the_run_and_the_note(tmp_path):
    root = _run_with_deep_metrics(tmp_path / "run")
    at = board(root, page="metrics")
    assert not at.exception, at.exception
    shown = html.unescape(" ".join(e.value for kind in ("warning", "caption", "info", "markdown")
                                   for e in at.get(kind)))  # shown escaped, as literal text
    assert REASON in shown


def _dump_with_deep_extra(src: Path) -> Path:
    lines = [line_of(make_sample(s, seed=i)) for s in range(3) for i in range(2)]
    lines.insert(3, line_of(make_sample(1, seed=7)).rstrip(b"}\n") + b', "meta": ' + DEEP
                 + b"}\n")
    src.mkdir()
    (src / "rollout_data_rank_0.jsonl").write_bytes(b"".join(lines))
    return src


def test_convert_skips_a_deep_extra_as_a_bad_line(tmp_path):
    src = _dump_with_deep_extra(tmp_path / "src")
    out = _cli("convert", str(src), str(tmp_path / "dst"))
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    assert out.stderr.decode().strip() == f"rollout_data_rank_0.jsonl:4: {REASON} 201 > 200"
    assert b"6 samples" in out.stdout and b"1 bad lines skipped" in out.stdout
    assert len(open_run(tmp_path / "dst", use_cache=False).samples) == 6
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dst", "src"]  # no partial dir


def test_a_convert_that_fails_leaves_no_output(tmp_path, monkeypatch):
    """Interrupted after some files are written (a Ctrl-C, a full disk): no dst, no
    temporary dir."""
    src = tmp_path / "src"
    for rank in range(3):
        path = src / f"rollout_data_rank_{rank}.jsonl"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"".join(line_of(make_sample(s, seed=rank)) for s in range(4)))
    real_flush, flushed = ParquetSink.flush, []

    def flush_then_stop(sink: ParquetSink) -> None:
        real_flush(sink)
        flushed.append(sink)
        if len(flushed) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(ParquetSink, "flush", flush_then_stop)
    with pytest.raises(KeyboardInterrupt):
        convert(src, tmp_path / "dst")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


def test_convert_into_a_dir_with_other_files_keeps_them(tmp_path):
    src = _dump_with_deep_extra(tmp_path / "src")
    (tmp_path / "dst").mkdir()
    (tmp_path / "dst" / "README.txt").write_text("notes")
    done = convert(src, tmp_path / "dst")
    assert (tmp_path / "dst" / "README.txt").read_text() == "notes"
    assert all(path.exists() and path.parent == tmp_path / "dst" for path in done.written)
    assert len(done.written) == 1 and done.bad_lines == 1  # 6 samples: one file, across steps
