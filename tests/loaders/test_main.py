"""python -m loaders, run as a real subprocess (and its main() in this process)."""
import contextlib
import io
import os
import subprocess
import sys

import orjson
from dump_files import ROOT, line_of, make_sample

REQUIRED = {"files", "steps", "samples", "bad_lines", "problems", "nan_values", "seconds",
            "cache"}


# as a user's shell runs it: output to a pipe is block-buffered, so what the CLI leaves in
# its buffer at exit is lost unless it flushes (__main__.finished)
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "loaders", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env=_ENV)


def test_json_summary_and_cache_states(dump_dir):
    with open(dump_dir / "rollout_data_rank_0.jsonl", "ab") as handle:
        handle.write(b"{oops\n" + line_of(make_sample(2, logprobs=[None, 1.0, 2.0, 3.0])))
    first = _cli(dump_dir, "--json")
    assert first.returncode == 0, first.stderr
    info = orjson.loads(first.stdout)
    assert info.keys() >= REQUIRED
    assert (info["files"], info["steps"], info["samples"]) == (2, 3, 25)
    assert info["bad_lines"] == 1 and info["nan_values"] == 1
    assert info["problems"] == [{"file": "rollout_data_rank_0.jsonl", "line": 13,
                                 "reason": info["problems"][0]["reason"]}]
    assert info["problems"][0]["reason"].startswith("invalid JSON")
    assert info["cache"] == "miss"
    assert orjson.loads(_cli(dump_dir, "--json").stdout)["cache"] == "hit"
    assert orjson.loads(_cli(dump_dir, "--json", "--no-cache").stdout)["cache"] == "miss"


def test_text_summary(dump_dir):
    result = _cli(dump_dir)
    assert result.returncode == 0
    assert "24 samples, 3 steps, 2 files" in result.stdout


def test_missing_dir_exits_nonzero_with_one_line(tmp_path):
    result = _cli(tmp_path / "nope", "--json")
    assert result.returncode != 0
    assert result.stderr.strip().count("\n") == 0 and "no such directory" in result.stderr


def test_dir_without_dump_exits_nonzero(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    result = _cli(tmp_path)
    assert result.returncode != 0 and "no .jsonl dump files" in result.stderr


def test_problem_list_is_capped(dump_dir):
    with open(dump_dir / "rollout_data_rank_0.jsonl", "ab") as handle:
        handle.write(b"bad\n" * 120)
    info = orjson.loads(_cli(dump_dir, "--json").stdout)
    assert info["bad_lines"] == 120 and len(info["problems"]) == 50


def test_output_past_a_pipe_buffer_arrives_whole(dump_dir):
    """The summary's process exits without the interpreter's teardown (__main__.finished):
    what it wrote must still reach a reader whole, past the 64 KB a pipe holds."""
    with open(dump_dir / "rollout_data_rank_0.jsonl", "ab") as handle:
        handle.write(b"".join(b'{"not json %d\n' % i for i in range(2000)))
    result = _cli(dump_dir, "--json", "--max-problems", "2000")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout) > 1 << 17
    info = orjson.loads(result.stdout)
    assert info["bad_lines"] == 2000 and len(info["problems"]) == 2000
    assert info["problems"][-1]["line"] == 2012


def test_the_summary_keeps_its_run_for_the_processs_end(dump_dir):
    """`python -m loaders` ends by os._exit: main() hands it the run, so the run is not freed
    object by object as main() returns (0.15-0.2 s of the long run's cold index)."""
    from loaders.__main__ import main

    held = []
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert main([str(dump_dir), "--json", "--no-cache"], held=held) == 0
    assert orjson.loads(printed.getvalue())["samples"] == 24
    assert [run.size for run in held] == [24]
    assert main([str(dump_dir / "missing")], held=held) == 2 and len(held) == 1
