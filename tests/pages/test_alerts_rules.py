"""The alert rules judge trends with the samples' standard errors, group hits into
incidents and point at the evidence (issue 14)."""
import math

import metric_fixtures as M
import numpy as np
import pandas as pd
import pytest
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.health.alerts import Alert, Drill
from loaders.health.check import check
from loaders.health.config import DEFAULTS
from loaders.health.incidents import incidents, into_incidents
from loaders.health.robust import trend_baseline
from loaders.health.rules import evaluate
from loaders.health.signals import health_signals
from loaders.metric_names import metric_for
from pages.figures import alerts as build
from samples.generate_alert_runs import make_run
from samples.write_alert_run import write_run


def _calm_dump(root, steps=100, per_step=8, seed=0):
    """The run of the issue: 8 samples a step, reward rising steadily, KL to the reference
    drifting up smoothly, each sample noisy."""
    rng = np.random.default_rng(seed)
    samples = []
    for step in range(1, steps + 1):
        for i in range(per_step):
            sample = make_sample(step, n=24, seed=i, prompt=f"q{i}",
                                 reward=float(rng.random() < 0.2 + 0.006 * step))
            drift = 0.01 + 0.0006 * step
            sample["ref_logprobs"] = [lp - drift * rng.lognormal(0, 0.8)
                                      for lp in sample["logprobs"]]
            samples.append(sample)
    write_dump(root / "rollout_data_rank_0.jsonl", samples)
    return open_run(root).samples


def test_a_healthy_run_of_8_samples_a_step_raises_no_strong_alert(tmp_path):
    samples = _calm_dump(tmp_path)
    alerts = check(tmp_path, samples).alerts
    assert not [a for a in alerts if a.severity == "strong"], alerts
    assert not [a for a in alerts if a.rule == "reward_hacking"]
    assert all(a.evidence.get("n") == 8 for a in alerts)


@pytest.mark.parametrize("seed, n", [(1, 8), (2, 64), (3, 1024)])
def test_generated_healthy_runs_stay_quiet(seed, n):
    run = make_run(seed, n)
    alerts = evaluate(health_signals(run.metrics, run.samples), run.samples, DEFAULTS)
    assert not [a for a in alerts if a.severity == "strong"]


def test_a_mean_of_few_samples_must_move_further():
    steps = pd.RangeIndex(1, 31)
    values = pd.Series(1.0 + 0.01 * np.arange(30), index=steps)
    values.iloc[-1] += 0.3  # the same jump at the last step
    few = trend_baseline(values, pd.Series(0.2, index=steps), n=pd.Series(8.0, index=steps))
    many = trend_baseline(values, pd.Series(0.2 / 32, index=steps),
                          n=pd.Series(8192.0, index=steps))
    assert few.score.iloc[-1] < 2 < 5 < many.score.iloc[-1]


def test_a_steady_drift_is_not_a_spike():
    rng = np.random.default_rng(0)
    steps = pd.RangeIndex(1, 101)
    values = pd.Series(0.001 + 0.0004 * np.arange(100) + 0.0002 * rng.normal(size=100),
                       index=steps)
    score = trend_baseline(values).score
    assert score.abs().max() < 5
    assert (values.iloc[-1] - values.rolling(20).median().iloc[-2]) / 0.0002 > 10  # flat: spike


def test_one_divergence_is_one_incident(tmp_path):
    rows = M.healthy(steps=80)
    for step in range(60, 70):
        rows[step - 1].update({"actor/ppo_kl": 0.25, "actor/grad_norm": 12.0,
                               "actor/entropy": 0.3})
    M.write_verl_file(tmp_path / "metrics.jsonl", rows)
    alerts = [a for a in check(tmp_path, None).alerts if a.rule == "divergence"]
    found = incidents(alerts)
    assert len(found) == 1
    incident = found[0]
    assert (incident.start, incident.severity) == (60, "strong") and incident.end >= 62
    assert {a.incident for a in alerts} == {incident.id} and {a.incident_start
                                                              for a in alerts} == {60}
    assert incident.peak_alert.evidence["signals"]


@pytest.mark.parametrize("fault, rule", [("mismatch_spike", "train_inference_mismatch"),
                                         ("degeneration", "degenerate_output"),
                                         ("group_collapse", "group_collapse")])
def test_new_rules_raise_their_fault_strongly_within_two_steps(fault, rule):
    run = make_run(7, 256, fault=fault, kind="abrupt", onset=60)
    alerts = evaluate(health_signals(run.metrics, run.samples), run.samples, DEFAULTS)
    hits = [a for a in alerts if a.rule == rule and 60 <= a.step <= 62]
    assert hits and any(a.severity == "strong" for a in hits)
    assert not [a for a in alerts if a.rule == rule and a.step < 60 and a.severity == "strong"]


def test_left_out_and_validation_samples_never_count():
    run = make_run(4, 64)
    samples = run.samples.copy()
    at = samples[S.STEP] == 50
    samples.loc[at & (samples.index % 2 == 0), S.EXCLUDED] = True  # half the step left out
    samples.loc[at & samples[S.EXCLUDED], [S.REWARD, S.RESPONSE_LEN]] = 0
    kept = samples[~samples[S.EXCLUDED]]
    pd.testing.assert_frame_equal(health_signals(None, samples), health_signals(None, kept))
    assert health_signals(None, samples).at[50, S.H_SAMPLES] == at.sum() - (
        at & samples[S.EXCLUDED]).sum()


def test_trainer_mismatch_metrics_are_not_the_policy_kl():
    names = ["rollout_corr/kl", "rollout_corr/k3_kl", "actor/kl_loss",
             "rollout_corr/rollout_is_mean"]
    assert metric_for(names, S.H_MISMATCH_KL) == "rollout_corr/k3_kl"
    assert metric_for(names, S.H_KL) == "actor/kl_loss" == metric_for(names, S.H_REF_KL)
    assert metric_for(["rollout_corr/kl"], S.H_KL) is None
    assert metric_for(names, S.H_IS_RATIO) == "rollout_corr/rollout_is_mean"


def test_each_alert_opens_its_evidence():
    columns = [S.RESPONSE_LEN, S.REPETITION, S.kl_mean(S.K2), S.kl_mean(S.K3)]
    length = build.target(Alert("batch_runaway", "strong", 5, drill=Drill(S.RESPONSE_LEN)),
                          S.K3, columns)
    assert length.route == "responses" and length.params == {
        "step": 5, "desc": True, "sort": "length (tokens)"}
    kl = build.target(Alert("kl_drift", "weak", 5, drill=Drill(S.kl_mean(S.K3))), S.K2, columns)
    assert kl.params["sort"] == f"KL {S.K2} mean"  # the KL the user chose
    loops = build.target(Alert("degenerate_output", "weak", 5, drill=Drill(S.REPETITION)),
                         S.K3, columns)
    assert loops.params in ({"step": 5, "desc": True, "sort": "(any column)",
                             "col": S.REPETITION},
                            {"step": 5, "desc": True, "sort": "repetition"})
    groups = build.target(Alert("group_collapse", "strong", 5,
                                drill=Drill(group_flag=S.ZERO_VARIANCE)), S.K3, columns)
    assert groups.route == "groups" and groups.params == {"step": 5,
                                                           "gflags": [S.ZERO_VARIANCE]}
    bare = build.target(Alert("rank_imbalance", "weak", 5), S.K3, columns)
    assert bare.route == "responses" and bare.params == {"step": 5}
    memory = build.target(Alert("memory_risk", "strong", 5, drill=Drill(health_panel="Memory")),
                          S.K3, columns)
    assert memory.route == "health" and memory.params == {"step": 5, "panel": "Memory"}


def test_the_index_scores_repetition_over_the_whole_response(tmp_path):
    loop = "Let me check again. " * 10 + "so the answer is 4 and " * 300
    prose = " ".join(f"word{i}" for i in range(2000))
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", [
        make_sample(0, seed=1, response=loop), make_sample(0, seed=2, response=prose),
        make_sample(0, seed=3, response="short")])
    scores = open_run(tmp_path).samples[S.REPETITION].tolist()
    assert scores[0] > 0.9 and scores[1] == 0.0 and scores[2] == 0.0
    assert not any(math.isnan(s) for s in scores)


def test_hits_a_quiet_step_apart_are_one_incident_and_further_apart_two():
    alerts = [Alert("kl_drift", "weak", s) for s in (10, 11, 13, 16)]
    joined = into_incidents(alerts, max_gap=1)
    assert [a.incident for a in joined] == ["kl_drift@10"] * 3 + ["kl_drift@16"]
    assert [i.end for i in incidents(joined)] == [13, 16]
    ranks = [Alert("rank_imbalance", "weak", 5, key="rank 1"),
             Alert("rank_imbalance", "weak", 5, key="rank 2")]
    assert len(incidents(into_incidents(ranks))) == 2  # one incident per rank


def test_a_degenerating_run_on_disk_is_found_from_its_text(tmp_path):
    run = make_run(5, 16, steps=40, fault="degeneration", onset=30, metrics=False)
    write_run(run, tmp_path)
    samples = open_run(tmp_path).samples
    assert samples[S.REPETITION].max() > 0.9  # scored by the index from the looping text
    found = [a for a in check(tmp_path, samples).alerts if a.rule == "degenerate_output"]
    assert found and 30 <= min(a.step for a in found) <= 32
    assert found[0].drill.column == S.REPETITION


def test_the_incidents_figure_draws_one_bar_per_incident():
    alerts = into_incidents([Alert("divergence", "strong", s) for s in (60, 61, 62)]
                            + [Alert("kl_drift", "weak", 40), Alert("kl_drift", "weak", 80)])
    chart = build.incidents_chart(incidents(alerts))
    data = chart.data.sort_values("start")
    assert data["severity"].tolist() == ["weak", "strong", "weak"]
    assert data[["from", "to"]].values.tolist() == [[39.5, 40.5], [59.5, 62.5], [79.5, 80.5]]
    assert data["peak"].tolist() == [40, 60, 80]  # no evidence to rank by: the first step
    assert data["incident"].tolist() == ["kl_drift@40", "divergence@60", "kl_drift@80"]
    colour = chart.spec["encoding"]["color"]["scale"]
    assert colour == {"domain": ["strong", "weak"],
                      "range": [build.COLOURS["strong"], build.COLOURS["weak"]]}
