"""pages.figures.staleness: the policy-lag panel's Vega-Lite charts."""
import numpy as np
import pandas as pd

from loaders.health.staleness import MIXED
from pages.figures import staleness as lags


def _table() -> pd.DataFrame:
    return pd.DataFrame({"0": [0.75, 0.5], "1": [0.25, 0.0], "2+": [0.0, 0.5],
                         "lag mean": [0.25, 1.0], "lag max": [1.0, 2.0], MIXED: [0.1, 0.0]},
                        index=pd.Index([3, 4], name="step"))


def test_the_lag_shares_stack_a_bin_on_the_ones_before_it():
    shares, lag_line, mixed = lags.lag_panels(_table(), step=4)
    rows = shares.data.set_index(["step", "lag"])
    assert rows.loc[(3.0, "1"), ["bottom", "top"]].tolist() == [0.75, 1.0]
    assert rows.loc[(4.0, "2+"), ["bottom", "top"]].tolist() == [0.5, 1.0]
    assert (4.0, "1") not in rows.index  # a bin with no sample at a step: no bar
    assert shares.spec["encoding"]["color"]["scale"]["domain"] == ["0", "1", "2+"]
    by = lag_line.data.groupby("series")["value"].apply(list).to_dict()
    assert by == {"lag mean": [0.25, 1.0], "lag max": [1.0, 2.0]}
    np.testing.assert_allclose(mixed.data["value"], [0.1, 0.0])
    assert {"x": {"datum": 4}} in [layer["encoding"] for layer in lag_line.spec["layer"]
                                   if layer["mark"]["type"] == "rule"]


def test_by_lag_counts_on_the_left_and_a_metric_on_the_right():
    table = pd.DataFrame({"samples": [6, 2], "kl_k3_mean": [0.01, 0.05]},
                         index=pd.Index(["0", "1"], name="policy lag"))
    chart = lags.by_lag_chart(table, "kl_k3_mean", step=4)
    assert chart.data.values.tolist() == [["0", 6, 0.01], ["1", 2, 0.05]]
    bars, line = chart.spec["layer"]
    assert line["encoding"]["y"]["axis"] == {"orient": "right"}
    assert chart.spec["resolve"] == {"scale": {"y": "independent"}}
    missing = lags.by_lag_chart(table, "reward", step=4)  # a metric the step lacks: no line
    assert missing.data["mean"].isna().all()
