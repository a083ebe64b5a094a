"""Response clusters on Responses and Groups, through the real board: a templated answer a
third of a step gives is one cluster the chooser keeps, opened with its table and the
diversity over the run."""
from __future__ import annotations

import json
import random

import pyarrow as pa
import pytest
from apptest import board, texts
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.serve.clusters import step_clusters

TEMPLATE = "The final answer is {n}. I am completely certain that {n} is correct, trust me."


@pytest.fixture
def cluster_dump(tmp_path):
    rng = random.Random(2)
    words = ["".join(rng.choice("abcdefghij") for _ in range(rng.randrange(3, 8)))
             for _ in range(800)]
    samples = []
    for step in range(3):
        for i in range(48):
            templated = step == 2 and i % 3 == 0  # a third of step 2
            text = TEMPLATE.format(n=rng.randrange(99)) if templated else " ".join(
                rng.choice(words) for _ in range(30))
            samples.append(make_sample(step, n=8, seed=i, response=text, uid=f"s{step}g{i // 4}",
                                       reward=1.0 if templated else 0.0))
    write_dump(tmp_path / "rollout_data_rank_0.jsonl", samples)
    return tmp_path


def _template_cluster(dump) -> str:
    """The templated answers' cluster id, as the data layer names it (its first member)."""
    run = open_run(dump)
    return step_clusters(run.step_rows(2))[1].index[0]


def test_the_chooser_keeps_one_cluster_on_responses(cluster_dump):
    at = board(cluster_dump, page="responses", step="2")
    assert not at.exception, at.exception
    assert len(at.dataframe[0].value) == 48
    chooser = at.selectbox(key="cluster")
    label = next(o for o in chooser.options if o.startswith("16 responses (33%)"))
    assert "The final answer is #. I am completely certain that #" in label
    template = _template_cluster(cluster_dump)
    chooser.set_value(template).run()
    table = at.dataframe[0].value
    assert len(table) == 16 and table[S.RESPONSE].str.startswith("The final answer").all()
    assert at.query_params["cluster"] in (template, [template])  # its name, not its label
    linked = board(cluster_dump, page="responses", step="2", cluster=template)  # the link
    assert not linked.exception and len(linked.dataframe[0].value) == 16
    older = board(cluster_dump, page="responses", step="2",
                  cluster=label)  # a link from before, which held the chooser's label
    assert not older.exception and len(older.dataframe[0].value) == 16
    at.selectbox(key="cluster").set_value("(all)").run()
    assert "cluster" not in at.query_params and len(at.dataframe[0].value) == 48


def test_the_opened_panel_has_the_table_and_the_curve(cluster_dump):
    at = board(cluster_dump, page="responses", step="2", cluster_open="true")
    assert not at.exception, at.exception
    assert "33 clusters of 48 responses (1 of more than one response); the largest holds 16 " \
           "(33%)" in texts(at)
    clusters = next(d.value for d in at.dataframe if "skeleton" in d.value.columns)
    assert clusters["size"].iloc[0] == 16 and clusters["pass rate"].iloc[0] == 1.0
    at.toggle(key="diversity").set_value(True).run()
    assert not at.exception and not at.get("plotly_chart")
    (chart,) = at.get("vega_lite_chart")  # no click: no key in AppTest
    assert json.loads(chart.proto.spec)["title"]["text"].startswith("diversity over the run")
    curves = pa.ipc.open_stream(chart.proto.data.data).read_all().to_pandas()
    by_series = {name: rows.set_index("step")["value"].round(4).to_dict()
                 for name, rows in curves.groupby("series")}
    # 48 distinct answers at steps 0 and 1; at step 2 the template's 16 make one cluster
    assert by_series == {"clusters per 100": {0: 100.0, 1: 100.0, 2: 68.75},
                         "largest cluster, % of the step": {0: 2.0833, 1: 2.0833, 2: 33.3333},
                         "reward mean": {0: 0.0, 1: 0.0, 2: 0.3333}}


def test_groups_keep_the_groups_with_an_answer_in_the_cluster(cluster_dump):
    at = board(cluster_dump, page="groups", step="2")
    assert not at.exception, at.exception
    every = len(at.dataframe[0].value)
    at.selectbox(key="gcluster").set_value(_template_cluster(cluster_dump)).run()
    assert not at.exception, at.exception
    assert len(at.dataframe[0].value) == every == 12  # a templated answer in every group
