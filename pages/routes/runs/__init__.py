"""Compare runs: two or more runs overlaid, B − A on common steps, the same prompt's answers
across runs, and every run's metrics and alerts, coloured by run."""
from __future__ import annotations

import streamlit as st

from loaders import schema as S
from loaders.metrics.collect import TIME
from loaders.serve.runset import (
    curve_stats,
    metric_frame,
    step_difference,
    wall_times,
    warm_health,
)
from pages.figures import runs as build
from pages.figures import runs_alerts as alerts
from pages.figures import runs_curves as curves
from pages.figures.text import literal
from pages.frame.view import View
from pages.routes.runs import prompts as runs_prompts
from pages.routes.runs.choice import Member, choose_runs, forget_stale, legend

CURVES, DIFFERENCE, SAME_PROMPT, METRICS = ("Curves", "Difference B − A", "Same prompt",
                                            "Metrics & alerts")
SECTIONS = (CURVES, DIFFERENCE, SAME_PROMPT, METRICS)
METRIC = "metric: "  # a training metric among the difference's quantities


def _quantities(estimator: str) -> dict[str, tuple[str, str]]:
    """What the curves and the difference can show: (step-stats column, title)."""
    return {"reward": (S.stat(S.REWARD, "mean"), "reward mean"),
            "ref_reward": (S.stat(S.REF_REWARD, "mean"), "ref_reward mean"),
            "KL": (S.stat(S.kl_mean(estimator), "mean"), f"per-token KL ({estimator}) mean"),
            "response length": (S.stat(S.RESPONSE_LEN, "mean"), "response length (tokens)"),
            "win rate": (S.WIN_RATE, "win rate vs the reference")}


def _pair(members: list[Member]) -> tuple[int, int]:
    """Baseline A and the run B compared with it (B − A), by position."""
    labels = [m.label for m in members]
    forget_stale("run_a", range(len(labels)))
    forget_stale("run_b", range(len(labels)))
    left, right = st.columns(2)
    a = left.selectbox("A (baseline)", range(len(labels)), key="run_a", bind="query-params",
                       format_func=lambda i: labels[i])
    b = right.selectbox("B", range(len(labels)), index=1 if a == 0 else 0, key="run_b",
                        bind="query-params", format_func=lambda i: labels[i])
    if a == b:
        st.warning("A and B are the same run: choose another B.")
    return a, b


def _smoothing() -> tuple[float, str]:
    left, right = st.columns([3, 1])
    smoothing = left.slider("EMA smoothing", 0.0, 0.99, 0.0, 0.01, key="runs_ema",
                            bind="query-params", help="The same debiased EMA as the "
                            "single-run pages; the raw curves stay faint below")
    x_axis = right.radio("x axis", [build.STEP_AXIS, build.TIME_AXIS], key="runs_x",
                         bind="query-params", horizontal=True,
                         help="time: hours since each run's first logged step, where its "
                              "training metrics log a wall time; step otherwise")
    return smoothing, x_axis


def _times(members: list[Member], view: View, x_axis: str) -> list:
    if x_axis != build.TIME_AXIS:
        return []
    return [wall_times(m.run, view.metrics_path) for m in members]


def _curves(members: list[Member], view: View) -> None:
    smoothing, x_axis = _smoothing()
    band = st.slider("Band: ± k·std (reward)", 0.0, 3.0, 1.0, 0.25, key="runs_band",
                     bind="query-params")
    series = [build.Series(m.label, m.colour, curve_stats(m.run)) for m in members]
    times = _times(members, view, x_axis)
    columns = st.columns(2)
    for i, (name, (column, title)) in enumerate(_quantities(view.options.kl_estimator).items()):
        chart = curves.overlay_chart(series, column, band_k=band if name == "reward" else 0.0,
                                     smoothing=smoothing, title=title, x_axis=x_axis,
                                     times=times)
        columns[i % 2].vega_lite_chart(chart.data, chart.spec, width="stretch",
                                       key=f"c_runs_{i}")


def _difference(members: list[Member], view: View, a: int) -> None:
    """B − A of a sample quantity or of a training metric A logged, on common steps."""
    choices = _quantities(view.options.kl_estimator)
    base = members[a]
    metrics = [n for n in metric_frame(base.run, view.metrics_path).columns if n != TIME]
    name = st.selectbox("Quantity", [*choices, *(METRIC + n for n in sorted(metrics))],
                        key="runs_diff", bind="query-params",
                        help="A sample quantity, or a training metric the baseline logged")
    if name.startswith(METRIC):
        column = title = name[len(METRIC):]
        frames = [metric_frame(m.run, view.metrics_path) for m in members]
    else:
        column, title = choices[name]
        frames = [curve_stats(m.run) for m in members]
    diffs = [build.Series(m.label, m.colour, step_difference(frames[a], frames[i], column))
             for i, m in enumerate(members) if i != a]
    chart = curves.difference_chart(diffs, title, base.label)
    st.vega_lite_chart(chart.data, chart.spec, width="stretch", key="c_runs_diff")
    box = st.expander("The numbers (A, B and B − A per common step)", key="runs_numbers",
                      on_change="rerun", bind="query-params")
    if not box.open:  # drawn only once opened: a closed expander's contents still cost
        return
    with box:
        st.caption(literal(" · ".join(f"{one.label} − {base.label}: {len(one.frame)} common "
                                      "steps" for one in diffs)))
        st.dataframe(build.difference_table(diffs, base.label), width="stretch")


def _metrics_alerts(members: list[Member], view: View) -> None:
    healths = [m.run.health(view.metrics_path) for m in members]
    names = sorted({n for h in healths for n in h.metrics.names})
    if names:
        smoothing, x_axis = _smoothing()
        metric = st.selectbox("Training metric", names, key="runs_metric", bind="query-params")
        series = [build.Series(m.label, m.colour, h.metrics.frame)
                  for m, h in zip(members, healths)]
        times = [build.metric_times(h.metrics.frame) for h in healths]
        chart = curves.overlay_chart(series, metric, smoothing=smoothing, title=metric,
                                     x_axis=x_axis, times=times)
        st.vega_lite_chart(chart.data, chart.spec, width="stretch", key="c_runs_metric")
    else:
        st.info("No training metrics in these runs' dirs.")
    table = alerts.alerts_frame([(m.label, h.alerts) for m, h in zip(members, healths)])
    if table.empty:
        st.success("No alerts in any of these runs.")
        return
    run_colours = {m.label: m.colour for m in members}
    chart = alerts.alerts_timeline(table, run_colours)
    st.vega_lite_chart(chart.data, chart.spec, width="stretch", key="c_runs_alerts")
    st.dataframe(alerts.coloured_by_run(table, run_colours), hide_index=True, width="stretch")


def render(view: View) -> None:
    st.header("Compare runs")
    members = choose_runs()
    if len(members) < 2:
        st.info("Choose two or more runs: sub-runs of the dump dir, or other dump dirs "
                "(one per line).")
        return
    legend(members)
    warm_health([m.run for m in members], view.metrics_path)
    a, b = _pair(members)
    section = st.segmented_control("View", SECTIONS, default=CURVES, key="runs_view",
                                   bind="query-params", required=True)
    if section == DIFFERENCE:
        _difference(members, view, a)
    elif section == SAME_PROMPT:
        runs_prompts.render(members, view, a, b)
    elif section == METRICS:
        _metrics_alerts(members, view)
    else:
        _curves(members, view)
