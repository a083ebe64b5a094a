"""Metrics, Health and Alerts pages through the real board."""
import metric_fixtures as M
from apptest import board, current_page, texts
from dump_files import make_sample, write_dump


def _run_with_metrics(tmp_path, rows, steps=60):
    root = tmp_path / "run"
    samples = [make_sample(step, n=4 + step % 3, seed=step * 10 + i)
               for step in range(1, steps + 1) for i in range(2)]
    for sample in samples:  # a calm policy: a small, steady drift from the reference
        sample["ref_logprobs"] = [v - 0.01 for v in sample["logprobs"]]
    write_dump(root / "rollout_data_rank_0.jsonl", samples)
    M.write_verl_file(root / "logs" / "metrics.jsonl", rows)
    return root


def test_metrics_page_groups_filters_and_explains(tmp_path):
    at = board(_run_with_metrics(tmp_path, M.healthy()), page="metrics")
    assert not at.exception, at.exception
    groups = at.selectbox(key="group")
    assert any(o.startswith("actor") for o in groups.options)
    at.text_input(key="filter").input("grad_norm").run()
    assert at.selectbox(key="group").value == "actor"
    charts = at.get("vega_lite_chart")  # Vega-Lite: no Plotly script for the page
    assert len(charts) == 1 and "grad_norm" in charts[0].proto.spec and not at.get(
        "plotly_chart")
    label = next(t for t in at.text if t.value == "actor/grad_norm")
    assert "gradient" in label.proto.help.lower()
    at.slider(key="metric_ema").set_value(0.6).run()
    assert not at.exception


def test_metrics_from_a_second_path_and_wall_time(tmp_path):
    root = tmp_path / "dump"
    write_dump(root / "rollout_data_rank_0.jsonl", [make_sample(1), make_sample(2)])
    M.write_prime(tmp_path / "elsewhere" / "metrics.jsonl", M.healthy(5))
    at = board(root, page="metrics", metrics=str(tmp_path / "elsewhere"))
    assert at.radio(key="x").options == ["step", "time"]
    at.radio(key="x").set_value("time").run()
    assert not at.exception and at.query_params["metrics"] in (
        str(tmp_path / "elsewhere"), [str(tmp_path / "elsewhere")])


def test_metrics_page_without_metrics_says_where_to_look(dump_dir):
    at = board(dump_dir, page="metrics")
    assert "No training metrics found" in texts(at)


def test_health_page_panels(tmp_path):
    at = board(_run_with_metrics(tmp_path, M.healthy()), page="health")
    assert not at.exception, at.exception
    assert [t.label for t in at.tabs] == ["Stage times", "Memory", "Per rank", "Stability",
                                          "Data quality", "Policy lag", "Latency"]
    # only the open tab is drawn; each panel through its URL parameter
    stages = at.get("vega_lite_chart")  # the first panel: Vega-Lite, no Plotly script
    assert len(stages) == 1 and "stage times per step" in stages[0].proto.spec
    assert not at.get("plotly_chart")  # the Memory panel is not drawn
    at = board(_run_with_metrics(tmp_path, M.healthy()), page="health", panel="Memory")
    assert "fraction of device memory" in at.get("vega_lite_chart")[0].proto.spec
    at = board(_run_with_metrics(tmp_path, M.healthy()), page="health", panel="Data quality")
    specs = [c.proto.spec for c in at.get("vega_lite_chart")]
    assert len(specs) == 2 and "response tokens" in specs[0] and "truncation" in specs[1]
    at = board(_run_with_metrics(tmp_path, M.healthy()), page="health", panel="Per rank")
    at.radio(key="rank_value").set_value("tokens").run()
    assert "tokens per rank and step" in " ".join(
        c.proto.spec for c in at.get("vega_lite_chart"))


def test_alerts_page_lists_incidents_and_opens_a_step_sorted_by_its_evidence(tmp_path):
    at = board(_run_with_metrics(tmp_path, M.faulty()), page="alerts")
    assert not at.exception, at.exception
    table = at.dataframe[0].value  # the incidents, above their expanders
    runaway = table[table["rule"] == "batch_runaway"].iloc[0]
    start = M.FAULTS["runaway"]
    assert (runaway["start"], runaway["end"], runaway["steps"]) == (start, start + 2, 3)
    assert runaway["severity"] == "strong" and "tokens=" in runaway["peak evidence"]
    key = f"t_inc_{runaway['incident']}"
    steps = at.dataframe(key=key).value
    assert steps["step"].tolist() == [start, start + 1, start + 2]
    at.session_state[key] = {"selection": {"rows": [1], "columns": [], "cells": []}}
    at.run()
    assert current_page(at) == "responses"
    assert at.sidebar.select_slider(key="step").value == start + 1
    assert at.selectbox(key="sort").value == "length (tokens)" and at.toggle(key="desc").value


def test_a_memory_incident_opens_the_memory_panel(tmp_path):
    at = board(_run_with_metrics(tmp_path, M.faulty()), page="alerts")
    table = at.dataframe[0].value
    memory = table[table["rule"] == "memory_risk"].iloc[0]
    at.button(key=f"b_t_inc_{memory['incident']}").click().run()
    assert current_page(at) == "health" and not at.exception
    assert "fraction of device memory" in " ".join(
        c.proto.spec for c in at.get("vega_lite_chart"))


def test_alerts_page_on_a_healthy_run(tmp_path):
    at = board(_run_with_metrics(tmp_path, M.healthy()), page="alerts")
    assert "No alerts" in texts(at)


def test_alerts_page_on_a_run_too_short_to_judge_says_so(board_dump):
    """Three steps: no step has the baseline's history yet, so 'no rule fired' is no news."""
    at = board(board_dump, page="alerts")
    assert not at.exception, at.exception
    assert "No alerts yet: a rule compares a step with at least 8 steps before it, and this " \
           "run has 3." in texts(at)
