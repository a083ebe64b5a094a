"""loaders.serve.read_around: the samples kept whose values were read around (non-finite
numbers, token lists of different lengths) and each file's half-written last line, each
named with its file and line, in the run and in the CLI's output."""
import json
import subprocess
import sys
from pathlib import Path

from dump_files import line_of, make_sample

from loaders import open_run
from loaders.serve.report import shown, summary_dict, summary_text

ROOT = Path(__file__).resolve().parents[2]


def _dump(root: Path) -> Path:
    """rank 0: line 2 a NaN reward and an Infinity logprob, line 4 a short logprob list, and
    a half-written line 6; rank 1: clean."""
    rows = [line_of(make_sample(1, seed=i)) for i in range(5)]
    rows[1] = line_of(make_sample(1, seed=1, reward=1234.5, logprobs=[-0.5, -987.25] + [-0.1] * 4)
                      ).replace(b"1234.5", b"NaN").replace(b"-987.25", b"Infinity")
    rows[3] = line_of(make_sample(2, seed=3, logprobs=[-0.1, -0.2]))  # 2 of 6 tokens
    half = line_of(make_sample(2, seed=9))[:57]
    root.mkdir(parents=True, exist_ok=True)
    (root / "rollout_data_rank_0.jsonl").write_bytes(b"".join(rows) + half)
    (root / "rollout_data_rank_1.jsonl").write_bytes(
        b"".join(line_of(make_sample(s, seed=7)) for s in (1, 2)))
    return root


def test_each_sample_read_around_is_named_by_file_line_step_and_reason(tmp_path):
    run = open_run(_dump(tmp_path / "run"), use_cache=False)
    assert run.size == 7 and run.bad_lines == 0 and not run.problems
    around = run.read_around
    assert around[["file", "line", "step"]].values.tolist() == [
        ["rollout_data_rank_0.jsonl", 2, 1], ["rollout_data_rank_0.jsonl", 4, 2]]
    assert around["reason"].tolist()[0].startswith("2 non-finite values")
    assert around["reason"].tolist()[1].startswith("token lists of different lengths")
    assert run.read_around_count == 2 and run.nan_values == 2
    assert run.pending_lines == [{"file": "rollout_data_rank_0.jsonl", "line": 6, "bytes": 57}]


def test_a_sample_with_both_is_listed_once_a_reason_and_counted_once(tmp_path):
    line = line_of(make_sample(3, logprobs=[-0.5, -987.25])).replace(b"-987.25", b"NaN")
    (tmp_path / "rollout_data_rank_0.jsonl").write_bytes(line)
    run = open_run(tmp_path, use_cache=False)
    assert run.read_around["line"].tolist() == [1, 1] and run.read_around_count == 1


def test_a_clean_run_has_none(tmp_path):
    (tmp_path / "rollout_data_rank_0.jsonl").write_bytes(line_of(make_sample(1)))
    run = open_run(tmp_path, use_cache=False)
    assert run.read_around.empty and run.read_around_count == 0 and run.pending_lines == []
    assert summary_dict(run)["read_around"] == []


def test_the_cli_names_them_and_prints_file_names_as_they_are(tmp_path):
    root = _dump(tmp_path / "run")
    (root / "rollout_data_rank_0.jsonl").rename(root / "rollout_\x1b[2J\u202e_rank_0.jsonl")
    out = subprocess.run([sys.executable, "-m", "loaders", str(root), "--no-cache", "--json"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    info = json.loads(out)
    name = "rollout_\x1b[2J\u202e_rank_0.jsonl"
    assert [(r["file"], r["line"]) for r in info["read_around"]] == [(name, 2), (name, 4)]
    assert info["read_around_total"] == 2
    assert info["pending_lines"] == [{"file": name, "line": 6, "bytes": 57}]
    text = subprocess.run([sys.executable, "-m", "loaders", str(root), "--no-cache"],
                          cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "\x1b" not in text and "\u202e" not in text
    assert "rollout_\\x1b[2J\\u202e_rank_0.jsonl:6: 57 bytes of a half-written line" in text
    assert "rollout_\\x1b[2J\\u202e_rank_0.jsonl:4: token lists of different lengths" in text
    assert "samples kept, values read around:" in text
    assert "samples kept" not in summary_text({**info, "read_around_total": 0})


def test_shown_escapes_what_a_terminal_acts_on_and_keeps_the_rest():
    assert shown("a\tb\x07c\u202ed\u2066é中 x") == "a\\tb\\x07c\\u202ed\\u2066é中 x"


def test_a_part_of_the_run_lists_the_whole_runs(tmp_path):
    """A left-out sample (sample_loss_mask 0) with a NaN reward: the trained part the pages
    show lists it, as the whole run counts it (the sidebar and the Problems page agree)."""
    rows = [line_of(make_sample(1, seed=0)),
            line_of(make_sample(1, seed=1, reward=1234.5, sample_loss_mask=0)).replace(
                b"1234.5", b"NaN")]
    (tmp_path / "rollout_data_rank_0.jsonl").write_bytes(b"".join(rows))
    run = open_run(tmp_path, use_cache=False)
    trained = run.trained()
    assert trained.size == 1 and trained.left_out is not None and trained.left_out.size == 1
    assert trained.read_around["line"].tolist() == run.read_around["line"].tolist() == [2]
    assert trained.read_around_count == run.read_around_count == 1
    assert trained.part(False).read_around_count == 1
