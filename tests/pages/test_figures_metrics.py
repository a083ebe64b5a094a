"""Metrics page builders: grouped names, one Vega-Lite chart per metric (axes, EMA, NaN, a
long run's points)."""
import numpy as np
import pandas as pd
import pytest

from pages.figures import glossary
from pages.figures import metrics as M
from pages.figures.curve_points import MAX_POINTS
from pages.figures.smoothing import RAW_OPACITY


def _frame(columns: dict, steps=None, time=None) -> pd.DataFrame:
    n = len(next(iter(columns.values())))
    index = pd.Index(steps if steps is not None else np.arange(n), name="step")
    data = dict(columns) | ({"time": time} if time is not None else {})
    return pd.DataFrame(data, index=index, dtype=np.float64)


def _ema(values, weight):
    """Debiased EMA written as an explicit weighted mean of all values so far."""
    out = []
    for n in range(1, len(values) + 1):
        weights = (1 - weight) * weight ** np.arange(n - 1, -1, -1)
        out.append(np.dot(weights, values[:n]) / (1 - weight**n))
    return np.array(out)


def _layer(chart, faint: bool = False) -> dict:
    """The main curve's layer (or the faint raw one's) of a metric chart."""
    lines = [layer for layer in chart.spec["layer"] if layer["mark"]["type"] == "line"]
    found = [layer for layer in lines if ("opacity" in layer["mark"]) == faint]
    assert len(found) == 1
    return found[0]


def _rule(chart) -> list:
    return [layer["encoding"]["x"]["datum"] for layer in chart.spec["layer"]
            if layer["mark"]["type"] == "rule"]


# ---- group_metrics -----------------------------------------------------------------------

NAMES = ["timing_s/gen", "actor/pg_loss", "critic/score/mean", "loss", "val/score/mean",
         "memory/x/allocated/rank_10", "memory/x/allocated/rank_2", "time/step_total",
         "perf/throughput", "zeta/custom", "alpha/custom", "actor/entropy", "system/tps"]


def test_groups_follow_group_order_then_alphabet_with_other_last():
    groups = M.group_metrics(NAMES)
    assert list(groups) == ["critic", "actor", "val", "timing", "perf & system", "memory",
                            "alpha", "zeta", "other"]
    assert sum(len(v) for v in groups.values()) == len(NAMES)
    assert groups["timing"] == ["time/step_total", "timing_s/gen"]
    assert groups["perf & system"] == ["perf/throughput", "system/tps"]
    assert groups["other"] == ["loss"]


def test_names_are_naturally_sorted_within_a_group():
    groups = M.group_metrics(NAMES)
    assert groups["memory"] == ["memory/x/allocated/rank_2", "memory/x/allocated/rank_10"]
    assert groups["actor"] == ["actor/entropy", "actor/pg_loss"]


def test_filter_is_a_case_insensitive_regex():
    groups = M.group_metrics(NAMES, "SCORE")
    assert groups == {"critic": ["critic/score/mean"], "val": ["val/score/mean"]}
    groups = M.group_metrics(NAMES, r"^(actor|time)/")
    assert groups == {"actor": ["actor/entropy", "actor/pg_loss"], "timing": ["time/step_total"]}
    assert M.group_metrics(NAMES, "nothing-matches-this") == {}


@pytest.mark.parametrize("pattern", ["", "   "])
def test_empty_pattern_keeps_everything(pattern):
    assert M.group_metrics(NAMES, pattern) == M.group_metrics(NAMES)


@pytest.mark.parametrize("pattern", ["actor/(", "[a-", "*score"])
def test_invalid_regex_raises_a_readable_value_error(pattern):
    with pytest.raises(ValueError, match="invalid filter pattern") as info:
        M.group_metrics(NAMES, pattern)
    assert repr(pattern) in str(info.value)


def test_no_names_no_groups():
    assert M.group_metrics([]) == {}


# ---- metric_chart ----------------------------------------------------------------------

def test_step_axis_draws_the_metric_over_the_step_index_and_the_chosen_step():
    frame = _frame({"actor/entropy": [1.0, 0.8, 0.7, 0.75], "x": [0, 0, 0, 0]},
                   steps=[5, 10, 15, 20])
    chart = M.metric_chart(frame, "actor/entropy", step=15)
    np.testing.assert_array_equal(chart.data["x"], [5, 10, 15, 20])
    np.testing.assert_allclose(chart.data["value"], [1.0, 0.8, 0.7, 0.75])
    np.testing.assert_array_equal(chart.data["step"], [5, 10, 15, 20])
    assert chart.spec["title"]["text"] == "actor/entropy"
    assert chart.spec["height"] == M.HEIGHT == 260
    main = _layer(chart)
    assert main["encoding"]["x"]["title"] == "step" and main["mark"]["point"]  # few: dots
    assert [t["field"] for t in main["encoding"]["tooltip"]] == ["step", "value"]
    assert _rule(chart) == [15]
    assert chart.spec["usermeta"]["embedOptions"]["renderer"] == "canvas"


def test_time_axis_is_minutes_since_the_first_logged_time():
    start = 1_700_000_000.0
    time = [np.nan, start + 30, start + 150, start + 600]
    frame = _frame({"critic/score/mean": [0.1, 0.2, 0.3, 0.4]}, steps=[1, 2, 3, 4], time=time)
    chart = M.metric_chart(frame, "critic/score/mean", x_axis="time", step=3)
    # step 1 has no time so it cannot be placed; the origin is the first logged time
    np.testing.assert_allclose(chart.data["x"], [0.0, 2.0, 9.5])
    np.testing.assert_allclose(chart.data["value"], [0.2, 0.3, 0.4])
    np.testing.assert_array_equal(chart.data["step"], [2, 3, 4])  # the hover's step
    assert "minutes" in _layer(chart)["encoding"]["x"]["title"]
    assert chart.spec["title"]["text"] == "critic/score/mean"
    assert _rule(chart) == []  # a step is no place on a time axis


@pytest.mark.parametrize("time", [None, [np.nan, np.nan, np.nan]])
def test_time_axis_falls_back_to_step_and_says_so(time):
    frame = _frame({"actor/lr": [1e-6, 2e-6, 3e-6]}, steps=[0, 1, 2], time=time)
    chart = M.metric_chart(frame, "actor/lr", x_axis="time", step=1)
    np.testing.assert_array_equal(chart.data["x"], [0, 1, 2])
    title = chart.spec["title"]["text"]
    assert title.startswith("actor/lr (") and "no wall time" in title and "step" in title
    assert _layer(chart)["encoding"]["x"]["title"] == "step" and _rule(chart) == [1]


def test_nan_steps_are_skipped_so_the_curve_stays_connected():
    frame = _frame({"val/score/mean": [np.nan, 0.5, np.nan, np.nan, 0.7, np.inf]},
                   steps=[0, 10, 20, 30, 40, 50])
    chart = M.metric_chart(frame, "val/score/mean")
    np.testing.assert_array_equal(chart.data["x"], [10, 40])
    np.testing.assert_allclose(chart.data["value"], [0.5, 0.7])


def test_smoothing_draws_the_ema_over_a_faint_raw_curve():
    values = np.array([1.0, 3.0, np.nan, 2.0, 6.0, 4.0])
    frame = _frame({"actor/grad_norm": values})
    chart = M.metric_chart(frame, "actor/grad_norm", smoothing=0.6)
    finite = values[np.isfinite(values)]
    faint = _layer(chart, faint=True)
    assert faint["mark"]["opacity"] == RAW_OPACITY and faint["mark"]["tooltip"] is None
    assert faint["encoding"]["y"]["field"] == "raw"
    np.testing.assert_allclose(chart.data["raw"], finite)
    np.testing.assert_array_equal(chart.data["x"], [0, 1, 3, 4, 5])
    np.testing.assert_allclose(chart.data["value"], _ema(finite, 0.6))
    assert chart.spec["title"]["text"] == "actor/grad_norm"
    plain = M.metric_chart(frame, "actor/grad_norm")  # no EMA: no faint curve
    assert not [layer for layer in plain.spec["layer"] if "opacity" in layer["mark"]]


def test_a_long_series_keeps_each_bins_extremes_smoothed_over_every_point():
    n = 12_002
    values = np.random.default_rng(7).normal(size=n)
    values[7_777] = 40.0  # a spike of one step stays drawn at its height
    frame = _frame({"critic/vf_loss": values}, steps=np.arange(n) * 2)
    chart = M.metric_chart(frame, "critic/vf_loss", smoothing=0.9)
    assert len(chart.data) <= 2 * MAX_POINTS and not _layer(chart)["mark"]["point"]
    kept = (chart.data["step"].to_numpy() // 2).astype(int)
    assert kept[0] == 0 and kept[-1] == n - 1 and 7_777 in kept
    full = pd.Series(values).ewm(alpha=0.1, adjust=True).mean().to_numpy()  # = debiased EMA
    np.testing.assert_allclose(chart.data["value"], full[kept])
    np.testing.assert_allclose(chart.data["raw"], values[kept])
    assert chart.spec["title"]["text"] == "critic/vf_loss"


@pytest.mark.parametrize("values", [[np.nan, np.nan], None])
def test_a_metric_without_values_says_so_in_its_title(values):
    frame = _frame({"a": [1.0, 2.0]} | ({"b": values} if values else {}))
    chart = M.metric_chart(frame, "b")
    assert chart.data.empty and chart.spec["title"]["text"] == "b (no values)"


# ---- help and axis options -----------------------------------------------------------------

def test_metric_help_uses_the_glossary_or_a_fallback():
    assert M.metric_help("actor/pg_clipfrac") == glossary.explain("actor/pg_clipfrac")
    assert M.metric_help("my/own_metric") == M.FALLBACK_HELP
    assert M.FALLBACK_HELP


def test_x_axis_options():
    assert M.x_axis_options(_frame({"a": [1.0]})) == ["step"]
    assert M.x_axis_options(_frame({"a": [1.0, 2.0]}, time=[np.nan, np.nan])) == ["step"]
    assert M.x_axis_options(_frame({"a": [1.0, 2.0]}, time=[np.nan, 5.0])) == ["step", "time"]
    assert M.x_axis_options(pd.DataFrame(index=pd.Index([], name="step"))) == ["step"]
