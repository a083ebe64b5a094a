"""Health signals and alert rules on runs with injected faults, and a healthy one."""
import subprocess
import sys

import metric_fixtures as M
import numpy as np
import orjson
import pandas as pd
import pytest
from dump_files import ROOT, make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.health.check import check
from loaders.health.config import DEFAULTS, load_config
from loaders.health.robust import deviation
from loaders.health.signals import health_signals, zero_variance_share
from loaders.health.special import rank_imbalance


def _alerts(tmp_path, rows, samples=None):
    M.write_verl_file(tmp_path / "metrics.jsonl", rows)
    return check(tmp_path, samples).alerts


def test_healthy_run_has_no_strong_alerts(tmp_path):
    alerts = _alerts(tmp_path, M.healthy())
    assert [a for a in alerts if a.severity == "strong"] == []


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_healthy_runs_with_other_noise_stay_quiet(tmp_path, seed):
    M.write_verl_file(tmp_path / "metrics.jsonl", M.healthy(seed=seed))
    assert not [a for a in check(tmp_path, None).alerts if a.severity == "strong"]


def test_each_injected_fault_is_flagged_at_its_step(tmp_path):
    found = {(a.rule, a.step, a.severity) for a in _alerts(tmp_path, M.faulty())}
    steps = M.FAULTS
    assert ("divergence", steps["divergence"], "strong") in found  # three signals agree
    assert ("divergence", steps["grad_only"], "weak") in found  # one signal, once
    # one extreme signal is weak at its first step and strong once it has held
    assert ("inference_anomaly", steps["abort"], "weak") in found
    assert ("inference_anomaly", steps["abort"] + 1, "strong") in found
    assert ("memory_risk", steps["memory"], "strong") in found
    assert ("batch_runaway", steps["runaway"] + 1, "strong") in found
    # reward hacking needs `persist` steps before it is raised at all
    assert ("reward_hacking", steps["hacking"] + 1, "strong") in found
    assert not [f for f in found if f[0] == "reward_hacking" and f[1] <= steps["hacking"]]


def test_alert_evidence_holds_the_values(tmp_path):
    alert = next(a for a in _alerts(tmp_path, M.faulty()) if a.rule == "divergence"
                 and a.severity == "strong")
    assert alert.evidence[S.H_GRAD_NORM] == 12.0 and alert.evidence["signals"] == [
        S.H_KL, S.H_GRAD_NORM, S.H_ENTROPY]
    assert 0.9 < alert.evidence[f"{S.H_GRAD_NORM}_trend"] < 1.1
    assert alert.evidence[f"{S.H_GRAD_NORM}_z"] > 100


def test_config_file_raises_thresholds(tmp_path):
    (tmp_path / "alerts.toml").write_text("[batch_runaway]\nk = 1000\n")
    rules = {a.rule for a in _alerts(tmp_path, M.faulty())}
    assert "batch_runaway" not in rules and "divergence" in rules


def test_config_rejects_unknown_settings(tmp_path):
    (tmp_path / "alerts.toml").write_text("[divergence]\nkk = 1\n")
    with pytest.raises(ValueError, match="divergence.kk"):
        load_config(tmp_path / "alerts.toml")
    assert load_config(None) == DEFAULTS


def test_deviation_is_robust_to_one_outlier_in_history():
    values = pd.Series([1.0] * 10 + [50.0] + [1.0] * 5 + [1.3])
    score = deviation(values, window=10, min_history=5, rel_floor=0.05)
    assert score.iloc[10] > 5 and score.iloc[-1] > 5  # the earlier outlier does not mask it
    assert np.isnan(score.iloc[2])  # not enough history


def _grpo_samples(tmp_path, flat_steps):
    samples = []
    for step in range(3):
        for prompt in range(4):
            for k in range(2):
                reward = 1.0 if step in flat_steps else float(k)
                samples.append(make_sample(step, seed=prompt, prompt=f"p{prompt}",
                                           reward=reward))
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", samples)
    return open_run(tmp_path).samples


def test_zero_variance_groups_share_per_step(tmp_path):
    samples = _grpo_samples(tmp_path, flat_steps={2})
    assert zero_variance_share(samples).tolist() == [0.0, 0.0, 1.0]
    assert not [a for a in check(tmp_path, samples).alerts if a.rule == "zero_variance_groups"]
    (tmp_path / "alerts.toml").write_text("[zero_variance]\nmin_groups = 4\n")  # 4 groups here
    alerts = check(tmp_path, samples).alerts
    assert [(a.rule, a.step, a.severity) for a in alerts if a.rule == "zero_variance_groups"] \
        == [("zero_variance_groups", 2, "weak")]  # strong once it holds for `persist` steps


def test_rank_imbalance_names_the_rank(tmp_path):
    for rank in range(8):
        n = 40 if rank == 3 else 8
        write_dump(tmp_path / f"rollout_data_rank_{rank}.jsonl",
                   [make_sample(0, n=n, seed=rank * 10 + i) for i in range(8)])
    alerts = rank_imbalance(open_run(tmp_path).samples, DEFAULTS)
    assert [(a.step, a.evidence["rank"]) for a in alerts] == [(0, 3)]


def test_signals_fall_back_to_the_dump(tmp_path, dump_dir):
    samples = open_run(dump_dir).samples
    signals = health_signals(None, samples)
    expected = samples.groupby(S.STEP)[S.REWARD].mean()
    assert signals[S.H_REWARD].tolist() == pytest.approx(expected.tolist())
    assert signals[S.H_TOKENS].tolist() == samples.groupby(S.STEP)[S.RESPONSE_LEN].sum().tolist()
    metrics = pd.DataFrame({"critic/score/mean": [9.0, 9.0, 9.0]}, index=[0, 1, 2])
    assert health_signals(metrics, samples)[S.H_REWARD].tolist() == [9.0, 9.0, 9.0]


def test_a_reward_of_inf_leaves_its_step_in_the_dump_signals(tmp_path):
    """The dump's reward signal is a mean of finite rewards, as the step stats are: a reward
    of inf (json.dumps writes Infinity) made the step's mean inf, and the stability panel
    lost it."""
    import json

    rewards = {0: [0.2, 0.4], 1: [0.1, float("inf"), 0.5]}
    lines = [json.dumps(make_sample(step, seed=i, reward=r))
             for step, values in rewards.items() for i, r in enumerate(values)]
    (tmp_path / "rollout_data_rank_0.jsonl").write_text("\n".join(lines) + "\n")
    signals = health_signals(None, open_run(tmp_path, use_cache=False).samples)
    assert signals[S.H_REWARD].tolist() == pytest.approx([0.3, 0.3])


def test_cli_alerts_json(tmp_path):
    M.write_roll_log(tmp_path / "run" / "logs" / "pipeline.log", M.faulty())
    out = subprocess.run([sys.executable, "-m", "loaders", str(tmp_path / "run"), "--alerts",
                          "--json"], cwd=ROOT, capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr
    alerts = orjson.loads(out.stdout)
    assert all(set(a) == {"rule", "severity", "step", "evidence", "incident",
                          "incident_start"} for a in alerts)
    runaway = [a for a in alerts if a["rule"] == "batch_runaway"]
    assert {a["incident_start"] for a in runaway} == {M.FAULTS["runaway"]}
    assert len({a["incident"] for a in runaway}) == 1
    assert {"rule": "batch_runaway", "severity": "strong", "step": M.FAULTS["runaway"] + 1} in [
        {k: a[k] for k in ("rule", "severity", "step")} for a in alerts]


def test_cli_alerts_on_an_empty_dir_fails_with_one_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "loaders", str(tmp_path), "--alerts"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stderr.count("\n") == 1


def test_row_means_are_nanmean_bit_for_bit_and_warn_of_no_empty_row():
    """The robust spread's row means: np.nanmean's sums and division, NaN for a row with no
    value, and no warning (raised from the health thread, it read as an error)."""
    import warnings

    import numpy as np

    from loaders.health.robust import _row_means

    rng = np.random.default_rng(0)
    a = rng.normal(size=(50, 30)) * 10.0 ** rng.integers(-5, 5, size=(50, 1))
    a[rng.random(a.shape) < 0.4] = np.nan
    a[0], a[1, 0] = np.nan, np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.nanmean(a, axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _row_means(a)
    assert got.tobytes() == want.tobytes() and np.isnan(got[0]) and np.isinf(got[1])
