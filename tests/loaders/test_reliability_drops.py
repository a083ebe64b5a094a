"""Nothing is dropped or overwritten silently: unreadable files are problems, yes/no fields
are read strictly, and extra keys that would share a column both keep their values."""
import builtins
import os
import subprocess
import sys

import orjson
import pytest
from dump_files import ROOT, make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.find.walk import DumpFile, discover
from loaders.index.refresh import refresh
from loaders.parse.arrays import BadField
from loaders.parse.fields import flag


def _problems(run, file: str) -> list[str]:
    return [p["reason"] for p in run.problems if p["file"] == file]


def test_a_broken_link_is_listed(tmp_path):
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", [make_sample(0)])
    (tmp_path / "rollout_data_rank_1.jsonl").symlink_to(tmp_path / "gone.jsonl")
    run = open_run(tmp_path)
    assert run.formats["rollout_data_rank_1.jsonl"] == "unknown"
    assert _problems(run, "rollout_data_rank_1.jsonl") == [
        "cannot read: a broken link; file skipped"]
    assert open_run(tmp_path).cache == "hit"  # and it stays listed, without a re-save


def test_a_file_that_cannot_be_opened_is_listed(tmp_path, monkeypatch):
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", [make_sample(0)])
    locked = write_dump(tmp_path / "rollout_data_rank_1.jsonl", [make_sample(1)])
    real = builtins.open

    def guarded(path, *args, **kwargs):
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded)
    run = open_run(tmp_path, use_cache=False)
    assert run.steps == [0]
    assert _problems(run, "rollout_data_rank_1.jsonl") == [
        "cannot read: Permission denied; file skipped"]


def test_a_directory_with_a_dump_name_is_listed(tmp_path):
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", [make_sample(0)])
    (tmp_path / "x.jsonl").mkdir()
    files = discover(tmp_path) + [DumpFile(tmp_path / "x.jsonl", "x.jsonl", -1)]
    stored, _ = refresh(files, None)
    assert [(p["file"], p["reason"]) for p in stored.problems] == [
        ("x.jsonl", "not a regular file; file skipped")]


def test_a_fifo_is_listed_and_never_read(tmp_path):
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", [make_sample(0)])
    os.mkfifo(tmp_path / "rollout_data_rank_1.jsonl")
    out = subprocess.run([sys.executable, "-m", "loaders", str(tmp_path), "--json"],
                         cwd=ROOT, capture_output=True, timeout=60)  # a read would block
    problems = orjson.loads(out.stdout)["problems"]
    assert [(p["file"], p["reason"]) for p in problems] == [
        ("rollout_data_rank_1.jsonl", "not a regular file; file skipped")]


@pytest.mark.parametrize(("value", "expected"), [
    (True, True), (False, False), (None, False), (1, True), (0, False), (1.0, True),
    ("true", True), ("false", False), ("False", False), (" TRUE ", True), ("1", True),
    ("0", False)])
def test_flags_are_read_strictly(value, expected):
    assert flag(value) is expected


@pytest.mark.parametrize("value", ["no", "yes", "", 2, -1, [], {}, 0.5, "nan"])
def test_anything_else_is_not_a_flag(value):
    with pytest.raises(BadField):
        flag(value)


def test_validation_strings_are_not_truthy(tmp_path):
    lines = [make_sample(0, validation=v, prompt=f"p{i}")
             for i, v in enumerate(["false", "true", 0, 1, "maybe", False])]
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", lines)
    write_dump(tmp_path / "rollout_data_rank_val0.jsonl",
               [make_sample(0, validation="maybe", prompt="val file")])
    run = open_run(tmp_path)
    rows = run.with_previews(run.samples)
    by_prompt = dict(zip(rows[S.PROMPT], rows[S.VALIDATION]))
    assert by_prompt == {"p0": False, "p1": True, "p2": False, "p3": True, "p4": False,
                         "p5": False, "val file": True}
    reasons = [(p["file"], p["line"], p["reason"]) for p in run.problems]
    assert reasons == [
        ("rollout_data_rank_0.jsonl", 5, "validation: expected true or false, got 'maybe'"),
        ("rollout_data_rank_val0.jsonl", 1, "validation: expected true or false, got 'maybe'")]


def test_an_extra_key_never_overwrites_a_derived_mean(tmp_path):
    first = make_sample(0, entropy=[1.0, 3.0], entropy_mean=7.5)
    second = {**{k: v for k, v in first.items() if k not in ("entropy", "entropy_mean")},
              "entropy_mean": 7.5, "entropy": [1.0, 3.0]}  # the same keys, the other order
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", [first, second])
    run = open_run(tmp_path)
    assert run.samples["entropy_mean"].tolist() == [7.5, 7.5]  # the trainer's own column
    assert run.samples["entropy_mean_2"].tolist() == [2.0, 2.0]  # the board's mean
    assert _problems(run, "rollout_data_rank_0.jsonl") == [
        "the mean of 'entropy' would be column 'entropy_mean', already used by the key "
        "'entropy_mean'; stored as 'entropy_mean_2'"] * 2


def test_a_prefixed_key_never_overwrites_a_literal_one(tmp_path):
    write_dump(tmp_path / "rollout_data_rank_0.jsonl",
               [make_sample(0, rank=5, extra_rank=9, file="a.py", extra_file="b.py")])
    run = open_run(tmp_path)
    row = run.samples.iloc[0]
    assert (row["extra_rank"], row["extra_rank_2"], row[S.RANK]) == (9, 5, 0)
    assert (row["extra_file"], row["extra_file_2"]) == ("b.py", "a.py")
    assert len(_problems(run, "rollout_data_rank_0.jsonl")) == 2


def test_keys_that_do_not_collide_keep_their_names(tmp_path):
    write_dump(tmp_path / "rollout_data_rank_0.jsonl",
               [make_sample(0, entropy=[1.0, 3.0], acc=1.0, rank=3)])
    run = open_run(tmp_path)
    row = run.samples.iloc[0]
    assert (row["entropy_mean"], row["acc"], row["extra_rank"]) == (2.0, 1.0, 3)
    assert not run.problems


def test_peeking_at_a_fifo_never_blocks(tmp_path):
    from loaders.find.kind import classify, first_record

    os.mkfifo(tmp_path / "pipe.jsonl")
    assert first_record(tmp_path / "pipe.jsonl") is None
    kind = classify(tmp_path / "pipe.jsonl", "pipe.jsonl")
    assert (kind.format, kind.reason) == ("unknown", "cannot read: not a regular file; "
                                                     "file skipped")
