"""Pure builders of the Health panels (data -> Vega-Lite chart): a panel opened loads no
Plotly script."""
from __future__ import annotations

import numpy as np
import pandas as pd

from loaders import schema as S
from pages.figures.step_panels import HIGH, LOW, STEP, Curve, Marks, Panel, panel
from pages.figures.vega import CANVAS, ONE_MARK, title

STABILITY = ((S.H_REWARD, "reward"), (S.H_KL, "KL"), (S.H_ENTROPY, "entropy"),
             (S.H_GRAD_NORM, "grad norm"))


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
            "title": title("stage times per step (stacked)"),
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


def rank_heatmap(table: pd.DataFrame, value: str) -> Panel:
    """rank x step heatmap of one per-rank value (a table of ranks by steps), a cell a step
    wide; an empty cell (a rank without samples at a step) is left out."""
    labels = [r if isinstance(r, str) else f"rank {r}" for r in table.index]
    steps = pd.to_numeric(pd.Index(table.columns), errors="coerce").to_numpy(np.float64)
    data = pd.DataFrame({RANK: np.repeat(labels, len(steps)),
                         STEP: np.tile(steps, len(labels)),
                         VALUE_OF: table.to_numpy(np.float64).ravel()})
    data = data[np.isfinite(data[VALUE_OF]) & np.isfinite(data[STEP])]
    data[FROM], data[TO] = data[STEP] - 0.5, data[STEP] + 0.5
    no_zero = {"zero": False, "nice": False}
    spec = {"height": {"step": 28}, "mark": {"type": "rect"}, **CANVAS,
            "title": title(f"{value} per rank and step"),
            "encoding": {
                "x": {"field": FROM, "type": "quantitative", "title": STEP, "scale": no_zero,
                      "axis": {"format": "d", "tickMinStep": 1}},
                "x2": {"field": TO},
                "y": {"field": RANK, "type": "nominal", "title": None, "sort": labels},
                "color": {"field": VALUE_OF, "type": "quantitative", "title": value,
                          "scale": {"scheme": "viridis"},  # one value everywhere read
                          "legend": {"format": ",.4~g"}},  # "1,024.000000" by default
                "tooltip": [{"field": RANK, "type": "nominal", "title": "of"},
                            {"field": STEP, "type": "quantitative", "format": "d"},
                            {"field": VALUE_OF, "type": "quantitative", "format": ".4g",
                             "title": value}]}}
    return Panel(data.reset_index(drop=True), spec)


RANK, VALUE_OF = "rank", "value"


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


def quality_panels(table: pd.DataFrame, step: int | None = None) -> list[Panel]:
    """Response length (min/mean/max) and the truncation ratio per step, two Vega-Lite step
    panels; the part of truncation inferred from the length cap (the dump did not say: a
    guess) dotted, where there is one."""
    steps = table.index.to_numpy(np.float64)
    lengths = [Curve(name, table[f"response tokens {name}"].to_numpy(np.float64), colour)
               for name, colour in (("min", "#9ecae1"), ("mean", "#1f77b4"),
                                    ("max", "#08306b"))]  # the title says of what
    truncation = [Curve("truncation ratio", table["truncation ratio"].to_numpy(np.float64),
                        "#d62728")]
    inferred = table.get("truncation inferred")
    if inferred is not None and inferred.fillna(0).any():
        truncation.append(Curve("of it inferred from the length cap",
                                inferred.to_numpy(np.float64), "#ff9896", "dot"))
    legend = {"orient": "bottom", "title": None, "labelLimit": 320}
    return [panel(steps, lengths, title="response tokens (min/mean/max)", y_title="tokens",
                  step=step, height=320, legend=legend),
            # a share on all of 0..1: a 0.4 % wobble auto-zoomed read as a full-height swing
            panel(steps, truncation, title="truncation ratio", y_title="share of samples",
                  step=step, height=320, legend=legend, percent=True)]
