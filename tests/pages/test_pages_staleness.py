"""Off-policy staleness of an async run through the real app and the loaders."""
import math

import numpy as np
import pytest
from apptest import board, errors, goto, texts

from loaders import open_run
from loaders import schema as S
from loaders.health import staleness
from samples.generate_dump import write_dump


@pytest.fixture(scope="module")
def async_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("async")
    write_dump(root, steps=6, ranks=2, samples_per_rank=32, max_tokens=32, seed=1, max_lag=3)
    return root


def _lines(root):
    import orjson
    return [orjson.loads(line) for path in sorted(root.glob("*.jsonl"))
            for line in path.read_bytes().splitlines()]


def test_each_samples_lag_and_span_are_its_step_less_its_versions(async_run):
    written = _lines(async_run)
    rows = open_run(async_run, use_cache=False).samples
    assert len(rows) == len(written) == 384
    lags = sorted(r["step"] - r["policy_version"] for r in written)
    spans = sorted(r.get("policy_version_newest", r["policy_version"]) - r["policy_version"]
                   for r in written)
    assert sorted(rows[S.POLICY_LAG].tolist()) == lags and max(lags) == 3
    assert sorted(rows[S.POLICY_SPAN].tolist()) == spans and max(spans) == 1
    table = staleness.lag_shares_of(open_run(async_run).numbers)
    bins = [c for c in table.columns if c not in ("lag mean", "lag max", staleness.MIXED)]
    np.testing.assert_allclose(table[bins].sum(axis=1), 1.0)
    per_step: dict[int, list] = {}
    for r in written:
        per_step.setdefault(r["step"], []).append(r)
    assert table["lag max"].tolist() == [max(x["step"] - x["policy_version"] for x in v)
                                         for _, v in sorted(per_step.items())]
    np.testing.assert_allclose(table[staleness.MIXED], [
        np.mean(["policy_version_newest" in x for x in v]) for _, v in sorted(per_step.items())])


def test_health_shows_the_lag_per_step_and_by_lag_at_the_chosen_step(async_run):
    at = board(async_run, page="health", panel="Policy lag", step="5", lag_chart="true")
    assert not errors(at)
    specs = [c.proto.spec for c in at.get("vega_lite_chart")]
    assert not at.get("plotly_chart") and len(specs) == 4  # three over the run, one by lag
    assert "share of samples by lag" in specs[0] and "step 5: samples and" in specs[3]
    by = at.dataframe[0].value
    step5 = open_run(async_run).step_rows(5)
    assert by["samples"].sum() == len(step5)
    assert by.loc["0", "samples"] == int((step5[S.POLICY_LAG] == 0).sum())


def test_an_on_policy_run_says_it_names_no_version(tmp_path):
    write_dump(tmp_path, steps=2, ranks=1, samples_per_rank=4, max_tokens=16)
    at = goto(board(tmp_path, page="health", panel="Policy lag"), "health")
    assert "No policy versions in this dump" in texts(at)


def test_responses_filter_and_sort_by_lag(async_run):
    at = board(async_run, page="responses", step="5", sort="policy lag")
    table = at.dataframe[0].value
    assert S.POLICY_LAG in table.columns
    assert table[S.POLICY_LAG].tolist() == sorted(table[S.POLICY_LAG].tolist(), reverse=True)
    at.slider(key="lag").set_value((2, 3)).run()
    kept = at.dataframe[0].value[S.POLICY_LAG]
    assert len(kept) and kept.between(2, 3).all()
    assert not math.isnan(kept.iloc[0])


def _lag_alerts(root, max_lag=None):
    if max_lag is not None:
        (root / "alerts.toml").write_text(f"[stale_policy]\nmax_lag = {max_lag}\n")
    run = open_run(root, use_cache=False)
    return [a for a in run.health(None).alerts if a.rule == "stale_policy"]


def test_a_lag_past_the_bound_is_an_alert_strong_when_a_tenth_of_the_step_is(tmp_path):
    """Lags 0-3 (the fixture's bound): quiet at the default bound of 4; at a bound of 1,
    every step with a sample past it is raised, strong where its p90 is past it too."""
    write_dump(tmp_path, steps=6, ranks=2, samples_per_rank=32, max_tokens=32, seed=1,
               max_lag=3)
    assert _lag_alerts(tmp_path) == []
    alerts = _lag_alerts(tmp_path, max_lag=1)
    rows = open_run(tmp_path, use_cache=False).samples
    by_step = rows.groupby(S.STEP)[S.POLICY_LAG]
    assert {a.step for a in alerts} == {s for s, top in by_step.max().items() if top > 1}
    for alert in alerts:
        p90 = by_step.quantile(0.9)[alert.step]
        assert alert.severity == ("strong" if p90 > 1 else "weak")
        assert alert.evidence[S.H_LAG_MAX] == by_step.max()[alert.step]
        assert alert.drill.column == S.POLICY_LAG
