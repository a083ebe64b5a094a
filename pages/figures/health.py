"""Pure builders of the Health panels (data -> figure)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from loaders import schema as S
from pages.figures import traces
from pages.figures.axes import integer_steps
from pages.figures.step_panels import HIGH, LOW, STEP, Curve, Marks, Panel, panel
from pages.figures.vega import CANVAS, ONE_MARK

STABILITY = ((S.H_REWARD, "reward"), (S.H_KL, "KL"), (S.H_ENTROPY, "entropy"),
             (S.H_GRAD_NORM, "grad norm"))


def _layout(fig: go.Figure, title: str, height: int = 320) -> go.Figure:
    fig.update_layout(title=title, height=height, margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      legend={"orientation": "h", "y": -0.3})
    return fig


def stage_times_chart(stages: pd.DataFrame) -> Panel:
    """Stacked seconds per stage per step, as Vega-Lite bars a step wide, stacked here (the
    Health page's first panel: drawn without Plotly's script, about 0.8 s of a fresh
    browser).  Stage names are the board's own labels (views.stage_columns)."""
    order = [str(c) for c in stages.columns]
    long = stages.set_axis(order, axis=1).rename_axis(STEP).reset_index().melt(
        id_vars=STEP, var_name=STAGE, value_name=SECONDS).dropna(subset=[SECONDS])
    long[STEP] = long[STEP].astype(float)
    long[FROM], long[TO] = long[STEP] - 0.45, long[STEP] + 0.45
    long[HIGH] = long.groupby(STEP, sort=False)[SECONDS].cumsum()  # in the stages' order
    long[LOW] = long[HIGH] - long[SECONDS]
    no_zero = {"zero": False, "nice": False, "padding": 10}  # the steps drawn, a margin
    spec = {"height": 320, "mark": {"type": "rect"}, **CANVAS,
            "title": {"text": "stage times per step (stacked)", "anchor": "start",
                      "fontSize": 13},
            "encoding": {
                "x": {"field": FROM, "type": "quantitative", "title": STEP, "scale": no_zero,
                      "axis": {"format": "d", "tickMinStep": 1}},
                "x2": {"field": TO},
                "y": {"field": LOW, "type": "quantitative", "title": SECONDS},
                "y2": {"field": HIGH},
                "color": {"field": STAGE, "type": "nominal", "scale": {"domain": order},
                          "legend": {"orient": "bottom", "title": None}},
                "tooltip": [{"field": STEP, "type": "quantitative", "format": "d"},
                            {"field": STAGE, "type": "nominal"},
                            {"field": SECONDS, "type": "quantitative", "format": ".3g"}]}}
    return Panel(long.reset_index(drop=True), spec)


STAGE, SECONDS, FROM, TO = "stage", "seconds", "from", "to"


def memory_chart(metrics: pd.DataFrame, groups: dict[str, list[str]],
                 step: int | None = None) -> Panel:
    """Allocated / reserved / max per device, as a fraction of the device total (a red
    dotted line at 1) when one is logged; Vega-Lite step curves, a metric's name a legend
    entry drawn as text (the panel a memory alert opens: no Plotly script to load)."""
    total = metrics[groups["total"]].max(axis=1) if "total" in groups else None
    names = [column for kind in ("allocated", "reserved", "max")
             for column in groups.get(kind, [])]
    curves = [Curve(name, (metrics[name] / total if total is not None else metrics[name])
                    .to_numpy(np.float64), _PALETTE[i % len(_PALETTE)])
              for i, name in enumerate(names)]
    unit = "fraction of device memory" if total is not None else "as logged"
    chart = panel(metrics.index.to_numpy(np.float64), curves,
                  title=f"memory per device ({unit})", y_title=unit, step=step, height=380,
                  legend={"orient": "bottom", "title": None, "labelLimit": 480, "columns": 2})
    if total is not None:  # past it, the device is out of memory
        chart.spec["layer"].append({"data": ONE_MARK, "mark": {
            "type": "rule", "strokeDash": [2, 3], "color": "#d62728"},
            "encoding": {"y": {"datum": 1.0}}})
    return chart


_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
            "#7f7f7f", "#bcbd22", "#17becf")


def rank_heatmap(table: pd.DataFrame, value: str) -> go.Figure:
    """rank x step heatmap of one per-rank value."""
    labels = [r if isinstance(r, str) else f"rank {r}" for r in table.index]
    fig = go.Figure(go.Heatmap(z=table.to_numpy(), x=table.columns.to_numpy(),
                               y=labels, colorscale="Viridis",
                               colorbar={"title": value},
                               hovertemplate="%{y}, step %{x}: %{z:.4g}<extra></extra>"))
    fig.update_layout(xaxis_title="step")
    integer_steps(fig, pd.to_numeric(table.columns, errors="coerce"))
    return _layout(fig, f"{value} per rank and step", height=120 + 28 * len(table))


def stability_panels(signals: pd.DataFrame, clipfrac: pd.Series | None = None, *,
                     step: int | None = None, alerts: tuple[int, ...] = ()) -> list[Panel]:
    """Reward, KL, entropy, grad norm and clip fraction, a small Vega-Lite panel each on
    the same steps, the chosen step a dotted rule and strong alerts' steps faint red bands
    (the panel an alert on grad norm or entropy opens: no Plotly script to load)."""
    series = [(label, signals[name]) for name, label in STABILITY if name in signals
              and signals[name].notna().any()]
    if clipfrac is not None and clipfrac.notna().any():
        series.append(("clip fraction", clipfrac))
    return [panel(values.index.to_numpy(dtype=np.float64),
                  [Curve(label, values.to_numpy(np.float64), colour)], title=label,
                  y_title="", step=step, height=STABILITY_PX, marks=Marks(alerts=alerts),
                  legend=False)
            for (label, values), colour in zip(series, _COLOURS)]


STABILITY_PX = 190  # a signal's panel, title and axis in it
_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e")


def quality_figure(table: pd.DataFrame) -> go.Figure:
    """Response length band (min/mean/max) and the truncation ratio per step."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=["response tokens (min/mean/max)",
                                                        "truncation ratio"])
    for name in ("response tokens min", "response tokens mean", "response tokens max"):
        fig.add_trace(traces.line(table.index.to_numpy(), y=table[name].to_numpy(),
                                   mode="lines", name=name), row=1, col=1)
    fig.add_trace(traces.line(table.index.to_numpy(),
                               y=table["truncation ratio"].to_numpy(),
                               mode=traces.line_mode(table),
                               name="truncation ratio"), row=1, col=2)
    inferred = table.get("truncation inferred")
    if inferred is not None and inferred.fillna(0).any():  # the dump did not say: a guess
        fig.add_trace(traces.line(table.index.to_numpy(), y=inferred.to_numpy(),
                                   mode=traces.line_mode(table), line={"dash": "dot"},
                                   name="of it inferred from the length cap"), row=1, col=2)
    return _layout(fig, "data quality")

