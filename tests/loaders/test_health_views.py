"""Data behind the Health panels."""
import pandas as pd
import pytest
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.health import views


def test_stage_times_sum_timers_per_stage_in_pipeline_order():
    metrics = pd.DataFrame({"timing_s/gen": [10.0, 11.0], "timing_s/ref": [2.0, 2.0],
                            "timing_s/old_log_prob": [1.0, 1.5],
                            "timing_s/update_actor": [5.0, 6.0],
                            "timing_s/step": [18.0, 20.5], "time/weird_stage": [0.5, 0.5],
                            "actor/entropy": [1.0, 1.0]}, index=[1, 2])
    stages = views.stage_times(metrics)
    assert list(stages.columns) == ["rollout / generation", "ref / old logprob", "actor update",
                                    "other"]
    assert stages.loc[2, "ref / old logprob"] == 3.5 and stages.loc[1, "other"] == 0.5


def test_memory_columns_by_kind():
    metrics = pd.DataFrame(columns=["perf/max_memory_allocated_gb", "memory/reserved_gpu0",
                                    "memory/allocated_gpu0", "perf/memory_total_gb", "x"])
    groups = views.memory_columns(metrics)
    assert groups == {"allocated": ["memory/allocated_gpu0"],
                      "reserved": ["memory/reserved_gpu0"],
                      "max": ["perf/max_memory_allocated_gb"],
                      "total": ["perf/memory_total_gb"]}


def test_device_memory_table():
    metrics = pd.DataFrame({"memory/allocated/gpu0": [1.0, 2.0], "memory/reserved/gpu0": [3.0, 3.5],
                            "memory/allocated/gpu1": [5.0, 1.0]}, index=[1, 2])
    table = views.device_memory(metrics)
    assert table.loc["device 0"].tolist() == [3.0, 3.5]
    assert table.loc["device 1"].tolist() == [5.0, 1.0]
    assert views.device_memory(pd.DataFrame({"a": [1.0]})).empty


@pytest.fixture
def two_ranks(tmp_path):
    for rank in range(2):
        write_dump(tmp_path / f"rollout_data_rank_{rank}.jsonl",
                   [make_sample(step, n=3 + rank, seed=rank, reward=0.5 * rank)
                    for step in range(2) for _ in range(2)])
    return open_run(tmp_path).samples


def test_rank_tables(two_ranks):
    assert views.rank_table(two_ranks, "samples").loc[1].tolist() == [2.0, 2.0]
    assert views.rank_table(two_ranks, "tokens").loc[1].tolist() == [8.0, 8.0]
    assert views.rank_table(two_ranks, "mean reward").loc[1].tolist() == [0.5, 0.5]


def test_quality_per_step(two_ranks):
    metrics = pd.DataFrame({"rollout/abort_ratio": [0.0, 0.25]}, index=[0, 1])
    table = views.quality(two_ranks, metrics)
    assert table.loc[0, "response tokens min"] == 3 and table.loc[0, "response tokens max"] == 4
    assert table["aborted ratio"].tolist() == [0.0, 0.25]
    assert table["NaN/Inf values"].tolist() == [0, 0]
    assert table.index.name == S.STEP
