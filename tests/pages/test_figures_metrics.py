"""Metrics page builders: grouped names, one chart per metric (axes, EMA, NaN, thinning)."""
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from pages.figures import glossary
from pages.figures import metrics as M
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


def _main(fig: go.Figure):
    mains = [t for t in fig.data if not t.name.endswith("(raw)")]
    assert len(mains) == 1
    return mains[0]


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


# ---- metric_figure -----------------------------------------------------------------------

def test_step_axis_draws_the_metric_over_the_step_index():
    frame = _frame({"actor/entropy": [1.0, 0.8, 0.7, 0.75], "x": [0, 0, 0, 0]},
                   steps=[5, 10, 15, 20])
    fig = M.metric_figure(frame, "actor/entropy")
    assert len(fig.data) == 1 and isinstance(fig.data[0], go.Scatter)
    np.testing.assert_array_equal(fig.data[0].x, [5, 10, 15, 20])
    np.testing.assert_allclose(fig.data[0].y, [1.0, 0.8, 0.7, 0.75])
    np.testing.assert_array_equal(fig.data[0].customdata, [5, 10, 15, 20])
    assert fig.layout.title.text == "actor/entropy"
    assert fig.layout.height == M.HEIGHT == 260
    assert fig.layout.xaxis.title.text == "step"


def test_time_axis_is_minutes_since_the_first_logged_time():
    start = 1_700_000_000.0
    time = [np.nan, start + 30, start + 150, start + 600]
    frame = _frame({"critic/score/mean": [0.1, 0.2, 0.3, 0.4]}, steps=[1, 2, 3, 4], time=time)
    fig = M.metric_figure(frame, "critic/score/mean", x_axis="time")
    trace = _main(fig)
    # step 1 has no time so it cannot be placed; the origin is the first logged time
    np.testing.assert_allclose(trace.x, [0.0, 2.0, 9.5])
    np.testing.assert_allclose(trace.y, [0.2, 0.3, 0.4])
    np.testing.assert_array_equal(trace.customdata, [2, 3, 4])
    assert "minutes" in fig.layout.xaxis.title.text
    assert fig.layout.title.text == "critic/score/mean"


@pytest.mark.parametrize("time", [None, [np.nan, np.nan, np.nan]])
def test_time_axis_falls_back_to_step_and_says_so(time):
    frame = _frame({"actor/lr": [1e-6, 2e-6, 3e-6]}, steps=[0, 1, 2], time=time)
    fig = M.metric_figure(frame, "actor/lr", x_axis="time")
    np.testing.assert_array_equal(_main(fig).x, [0, 1, 2])
    assert fig.layout.title.text.startswith("actor/lr (")
    assert "no wall time" in fig.layout.title.text and "step" in fig.layout.title.text
    assert fig.layout.xaxis.title.text == "step"


def test_nan_steps_are_skipped_so_the_curve_stays_connected():
    frame = _frame({"val/score/mean": [np.nan, 0.5, np.nan, np.nan, 0.7, np.inf]},
                   steps=[0, 10, 20, 30, 40, 50])
    trace = _main(M.metric_figure(frame, "val/score/mean"))
    np.testing.assert_array_equal(trace.x, [10, 40])
    np.testing.assert_allclose(trace.y, [0.5, 0.7])
    assert "markers" in trace.mode


def test_smoothing_draws_the_ema_over_a_faint_raw_curve():
    values = np.array([1.0, 3.0, np.nan, 2.0, 6.0, 4.0])
    frame = _frame({"actor/grad_norm": values})
    fig = M.metric_figure(frame, "actor/grad_norm", smoothing=0.6)
    assert len(fig.data) == 2
    raw = next(t for t in fig.data if t.name.endswith("(raw)"))
    finite = values[np.isfinite(values)]
    assert raw.opacity == RAW_OPACITY and raw.hoverinfo == "skip"
    np.testing.assert_allclose(raw.y, finite)
    np.testing.assert_array_equal(raw.x, [0, 1, 3, 4, 5])
    np.testing.assert_allclose(_main(fig).y, _ema(finite, 0.6))
    assert fig.layout.title.text == "actor/grad_norm"


def test_long_series_are_thinned_and_the_title_says_so():
    n = 12_002  # 12_001 is not a multiple of 3: the last point is added to the every-3rd ones
    values = np.sin(np.arange(n) / 100.0)
    frame = _frame({"actor/entropy": values}, steps=np.arange(n) * 2)
    trace = _main(M.metric_figure(frame, "actor/entropy"))
    k = 3  # the smallest k with ceil(n / k) + 1 <= 5000
    assert len(trace.x) <= M.MAX_POINTS
    expected = np.append(np.arange(0, n, k), n - 1)  # every 3rd, plus the latest value
    np.testing.assert_array_equal(trace.x, expected * 2)
    np.testing.assert_allclose(trace.y, values[expected])
    assert trace.mode == "lines"
    title = M.metric_figure(frame, "actor/entropy").layout.title.text
    assert title == "actor/entropy (every 3rd of 12,002 points)"


def test_thinned_smoothing_is_computed_on_every_point():
    n = 6_000
    values = np.random.default_rng(7).normal(size=n)
    frame = _frame({"critic/vf_loss": values})
    fig = M.metric_figure(frame, "critic/vf_loss", smoothing=0.9)
    keep, k = M.thin(n)
    assert k == 2 and len(_main(fig).y) == len(keep) <= M.MAX_POINTS
    full = pd.Series(values).ewm(alpha=0.1, adjust=True).mean().to_numpy()  # = debiased EMA
    np.testing.assert_allclose(_main(fig).y, full[keep])
    raw = next(t for t in fig.data if t.name.endswith("(raw)"))
    np.testing.assert_allclose(raw.y, values[keep])


@pytest.mark.parametrize("n", [1, 4999, 5000, 5001, 9998, 10_000, 123_457])
def test_thin_caps_points_and_keeps_both_ends(n):
    keep, k = M.thin(n)
    assert len(keep) <= M.MAX_POINTS and keep[0] == 0 and keep[-1] == n - 1
    assert (k == 1) == (n <= M.MAX_POINTS)
    assert np.all(np.diff(keep) >= 1) and np.all(np.diff(keep)[:-1] == k)


@pytest.mark.parametrize("values", [[np.nan, np.nan], None])
def test_a_metric_without_values_draws_a_note(values):
    frame = _frame({"a": [1.0, 2.0]} | ({"b": values} if values else {}))
    fig = M.metric_figure(frame, "b")
    assert len(fig.data) == 0
    assert "no values" in fig.layout.annotations[0].text


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
