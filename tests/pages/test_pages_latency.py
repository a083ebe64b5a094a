"""A step's request latency on the Health page, through the real app."""
import agent_format_fixtures as A
import pytest
from apptest import board, errors, texts
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.health import latency


def _timed(step: int, i: int) -> dict:
    """Requests of 1 s, and one straggler of 30 s that finished last."""
    slow = i == 7
    took = 30.0 if slow else 1.0 + i / 10
    return make_sample(step, seed=i, **{S.START_TS: 1000.0 + i, S.FINISH_TS: 1000.0 + i + took,
                                        S.REQUEST_S: took, S.GENERATE_S: took * 0.75,
                                        S.TOOL_S: took * 0.25})


@pytest.fixture(scope="module")
def timed_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("timed")
    write_dump(root / "rollout_data_rank_0.jsonl", [_timed(1, i) for i in range(8)])
    return root


def test_the_step_summary_names_the_straggler_and_the_wait_on_it(timed_run):
    rows = open_run(timed_run, use_cache=False).step_rows(1)
    facts = latency.summary(rows)
    assert facts["time max"] == 30.0 and facts["requests"] == 8
    # wall 1000 -> 1037; 99 % of requests were done by about 1007.0 + 0.99 x 30 ...
    finish = rows[S.FINISH_TS]
    assert facts["waiting on the last 1 %"] == pytest.approx(
        (finish.max() - finish.quantile(0.99)) / (finish.max() - rows[S.START_TS].min()))
    slow = latency.stragglers(rows)
    assert slow[S.KEY].iloc[0] == "rollout_data_rank_0.jsonl:8" and slow["time s"].iloc[0] == 30
    assert len(slow) == latency.MIN_STRAGGLERS


def test_health_latency_panel_draws_the_step(timed_run):
    at = board(timed_run, page="health", panel="Latency", step="1")
    assert not errors(at)
    assert {c.key for c in at.get("plotly_chart")} == {"c_latency"}  # the map on request
    at = board(timed_run, page="health", panel="Latency", step="1", tokens_time="true")
    assert {"c_latency", "c_tokens_time"} <= {c.key for c in at.get("plotly_chart")}
    assert at.dataframe(key="t_stragglers").value[S.KEY].iloc[0] == "rollout_data_rank_0.jsonl:8"


def test_verifiers_episodes_give_their_calls_time(tmp_path):
    at = board(A.prime_rollouts(tmp_path / "v"), page="health", panel="Latency", step="0")
    assert not errors(at) and "c_latency" in {c.key for c in at.get("plotly_chart")}


def test_a_dump_without_timing_says_where_it_would_come_from(tmp_path):
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", [make_sample(1, seed=i) for i in range(4)])
    assert "No request timing at this step" in texts(board(tmp_path, page="health",
                                                           panel="Latency", step="1"))


def test_a_turns_time_is_on_its_line_model_or_tool(tmp_path):
    at = board(A.prime_rollouts(tmp_path / "v"), page="sample", step="0",
               sample="rollouts/step_0/train/effective/traces.jsonl:1")
    assert not errors(at)
    shown = " ".join(t.value for t in at.text)  # a turn's metadata line, literal
    assert "model 1.5 s" in shown and "tool 1.5 s" in shown and "model 1 s" in shown


def test_areal_session_traces_give_their_tasks_timing(tmp_path):
    """AReaL writes a request's timing apart from its rollout dump (areal/utils/
    perf_tracer.py SessionRecord.to_dict), keyed by task_id: the panel joins them."""
    import orjson

    root = A.areal_rollouts(tmp_path / "areal")
    trace = root / "session_tracer" / "sessions-r0.jsonl"
    trace.parent.mkdir(parents=True)
    trace.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [
        {"task_id": 7, "session_id": s, "rank": 0, "status": "accepted",
         "submit_ts": 100.0 + s, "finalized_ts": 110.0 + 2 * s, "total_s": 10.0 + s,
         "generate_s": 6.0, "reward_s": 0.5, "toolcall_s": 3.0 + s,
         "phases": {"generate": [{"start_ts": 100.0, "end_ts": 106.0}]}}
        for s in range(2)]) + b'{"task_id": 7, "half')  # a line still being written
    run = open_run(root, use_cache=False)
    assert run.formats["session_tracer/sessions-r0.jsonl"] == "areal_sessions"
    assert run.problems == [] and set(run.samples[S.FILE]) == {  # the traces make no sample
        "rollout/2/7.jsonl", "rollout/3/7.jsonl", "eval-rollout/3/1.jsonl"}
    at = board(root, page="health", panel="Latency", step="3")
    assert not errors(at) and "c_latency" in {c.key for c in at.get("plotly_chart")}
    slow = at.dataframe(key="t_stragglers").value
    assert slow["time s"].tolist()[0] == 10.5 and slow[S.TOOL_S].tolist()[0] == 3.5
