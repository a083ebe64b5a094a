"""A step's request latency on the Health page, through the real app."""
import json

import agent_format_fixtures as A
import numpy as np
import pandas as pd
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


HISTOGRAM, MAP = "request time and its parts", "response tokens vs request time"


def _charts(at) -> dict[str, pd.DataFrame]:
    """The page's Vega-Lite charts' data by title (a chart without a click has no key in
    AppTest); no Plotly chart drawn."""
    import pyarrow as pa

    assert not at.get("plotly_chart")
    return {json.loads(c.proto.spec)["title"]["text"]:
            pa.ipc.open_stream(c.proto.data.data).read_all().to_pandas()
            for c in at.get("vega_lite_chart")}


def _request_counts(charts: dict[str, pd.DataFrame], step: int) -> pd.Series:
    bars = charts[f"step {step}: {HISTOGRAM}"]
    return bars.groupby("series")["count"].sum()


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
    charts = _charts(at)
    assert list(charts) == [f"step 1: {HISTOGRAM}"]  # the map on request
    bars = charts[f"step 1: {HISTOGRAM}"]
    request = bars[bars["series"] == "request time (8)"]
    # 40 shared bins from the fastest part (tool 0.25 s) to the straggler (30 s), a bar a
    # bin with requests: the 7 requests of 1-1.6 s in the second bin, the straggler in the last
    width = (30.0 - 0.25) / 40
    assert request["count"].tolist() == [7, 1]
    np.testing.assert_allclose(request["low"], [0.25 + width, 30.0 - width])
    np.testing.assert_allclose(request["high"], [0.25 + 2 * width, 30.0])
    assert _request_counts(charts, 1).to_dict() == {"request time (8)": 8, "generate_s (8)": 8,
                                                   "tool_s (8)": 8}
    assert (bars["count"] > 0).all()
    at = board(timed_run, page="health", panel="Latency", step="1", tokens_time="true")
    cells = _charts(at)[f"step 1: {MAP}"]
    # a cell a (tokens, time) bin with requests: 7 fast ones in the first time bin, the
    # straggler in the last; every response 6 tokens long
    assert cells.sort_values("time_low")["count"].tolist() == [7, 1]
    assert cells["time_low"].min() == 1.0 and cells["time_high"].max() == 30.0
    assert (cells["tokens_low"] <= 6).all() and (cells["tokens_high"] > 6).all()
    assert at.dataframe(key="t_stragglers").value[S.KEY].iloc[0] == "rollout_data_rank_0.jsonl:8"


def test_verifiers_episodes_give_their_calls_time(tmp_path):
    at = board(A.prime_rollouts(tmp_path / "v"), page="health", panel="Latency", step="0")
    assert not errors(at)
    shown = {m.label: m.value for m in at.metric}
    charts = _charts(at)
    assert _request_counts(charts, 0).to_dict() == {  # the requests the panel counts
        f"{name} ({shown['requests']})": int(shown["requests"])
        for name in ("request time", "generate_s", "tool_s")}
    bars = charts[f"step 0: {HISTOGRAM}"]
    tools = bars[bars["series"].str.startswith("tool_s")]
    assert len(tools) == 1 and tools["low"].item() <= 1.5 < tools["high"].item()  # 1.5 s each


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
    assert not errors(at)
    counts = _request_counts(_charts(at), 3)  # the step's two timed requests
    assert counts["request time (2)"] == 2 and counts["tool_s (2)"] == 2
    slow = at.dataframe(key="t_stragglers").value
    assert slow["time s"].tolist()[0] == 10.5 and slow[S.TOOL_S].tolist()[0] == 3.5
