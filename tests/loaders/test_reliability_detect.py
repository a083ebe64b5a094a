"""A file's format is decided once, by its name or by a vote over its first records: one odd
line never decides (or drops) a whole file, and a skipped file says why."""
import orjson
from dump_files import line_of, make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.find.kind import METRICS, UNKNOWN, classify, detect


def _native(count: int, step: int = 1) -> list[dict]:
    return [make_sample(step, seed=i, prompt=f"native {i}") for i in range(count)]


def test_native_rank_file_whose_first_line_lacks_step_keeps_its_samples(tmp_path):
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", [{"prompt": "no step"}] + _native(100))
    write_dump(tmp_path / "rollout_data_rank_1.jsonl", _native(101))
    run = open_run(tmp_path)
    assert run.formats == {"rollout_data_rank_0.jsonl": "native",
                           "rollout_data_rank_1.jsonl": "native"}
    assert len(run.samples) == 201
    assert [(p["file"], p["line"], p["reason"]) for p in run.problems] == [
        ("rollout_data_rank_0.jsonl", 1, "missing 'step'")]


def test_a_metric_like_first_line_does_not_make_a_dump_a_metrics_log(tmp_path):
    write_dump(tmp_path / "rollouts.jsonl", [{"step": 0, "lr": 0.1}] + _native(30))
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", [{"step": 0, "lr": 0.1}] + _native(30))
    run = open_run(tmp_path)
    assert set(run.formats.values()) == {"native"}
    for name in ("rollouts.jsonl", "rollout_data_rank_0.jsonl"):
        assert (run.samples[S.FILE] == name).sum() >= 30


def test_verl_keys_on_the_first_line_do_not_make_every_sample_verl(tmp_path):
    odd = make_sample(1, prompt="native 0", input="in", output="out", score=9.0)
    write_dump(tmp_path / "rollouts.jsonl", [odd] + _native(30)[1:])
    run = open_run(tmp_path)
    assert run.formats == {"rollouts.jsonl": "native"}
    assert run.with_previews(run.samples)[S.PROMPT].str.startswith("native").all()
    assert (run.samples[S.REWARD] != 9.0).all()  # `score` is not the reward in this format


def test_a_vague_name_goes_with_most_of_its_records(tmp_path):
    verl = [{"input": f"q{i}", "output": "a", "gts": "1", "score": 1.0, "step": 3}
            for i in range(10)]
    path = write_dump(tmp_path / "3.jsonl", [make_sample(3)] + verl)
    assert detect(path, "3.jsonl") == "verl"
    native = write_dump(tmp_path / "4.jsonl", _native(10, step=4))
    assert detect(native, "4.jsonl") == "native"


def test_a_tie_between_a_dump_and_metrics_reads_the_dump(tmp_path):
    path = write_dump(tmp_path / "mixed.jsonl", [{"step": 0, "lr": 0.1}, make_sample(0)])
    assert classify(path, "mixed.jsonl").format == "native"


def test_a_metrics_log_stays_a_metrics_log_and_is_no_problem(tmp_path):
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", _native(3))
    metrics = [{"step": i, "actor/loss": 0.5 / (i + 1), "lr": 1e-6} for i in range(30)]
    write_dump(tmp_path / "logs" / "metrics.jsonl", metrics)
    run = open_run(tmp_path)
    assert run.formats["logs/metrics.jsonl"] == METRICS
    assert not run.problems


def test_a_mostly_metrics_file_with_some_samples_says_so(tmp_path):
    metrics = [{"step": i, "actor/loss": 0.5} for i in range(10)]
    path = write_dump(tmp_path / "log.jsonl", metrics + _native(2))
    kind = classify(path, "log.jsonl")
    assert kind.format == METRICS and "10 of 12" in kind.reason and "2 like native" in kind.reason


def test_a_skipped_file_is_a_problem_that_names_the_keys_seen(tmp_path):
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", _native(2))
    write_dump(tmp_path / "odd.jsonl", [{"hello": "world", "foo": 1}, {"bar": [1]}])
    run = open_run(tmp_path)
    assert run.formats["odd.jsonl"] == UNKNOWN
    reasons = [p["reason"] for p in run.problems if p["file"] == "odd.jsonl"]
    assert len(reasons) == 1 and "keys seen: bar, foo, hello" in reasons[0]
    assert "skipped" in reasons[0]


def test_bad_lines_at_the_start_do_not_decide(tmp_path):
    path = tmp_path / "rollouts.jsonl"
    path.write_bytes(b"not json\n{broken\n" + b"".join(line_of(s) for s in _native(5)))
    assert classify(path, "rollouts.jsonl").format == "native"
    run = open_run(tmp_path)
    assert len(run.samples) == 5 and run.bad_lines == 2


def test_the_vote_reads_a_bounded_head(tmp_path, monkeypatch):
    from loaders.find import kind

    path = tmp_path / "rollouts.jsonl"
    line = orjson.dumps({"step": 1, "response": "x" * (kind.PEEK_BYTES + 10)}) + b"\n"
    path.write_bytes(line + line_of(make_sample(1)))
    reads = []
    real = kind._head

    def spy(p):
        data = real(p)
        reads.append(len(data))
        return data

    monkeypatch.setattr(kind, "_head", spy)
    assert classify(path, "rollouts.jsonl").format == "native"  # no whole line: read as native
    assert reads == [0]
