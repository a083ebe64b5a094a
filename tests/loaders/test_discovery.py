"""loaders.find.walk: which files are dumps, their order, their rank and the sub-runs."""
import pytest

from loaders.find.walk import CACHE_DIR_NAME, discover, dump_dirs, natural_key, rank_of


def _touch(root, *rels):
    for rel in rels:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b'{"step": 0, "response": "r"}\n')


def _rels(root):
    return [f.rel for f in discover(root)]


def test_natural_order_puts_rank_2_before_rank_10(tmp_path):
    _touch(tmp_path, "rollout_data_rank_10.jsonl", "rollout_data_rank_2.jsonl",
           "rollout_data_rank_1.jsonl")
    assert _rels(tmp_path) == ["rollout_data_rank_1.jsonl", "rollout_data_rank_2.jsonl",
                               "rollout_data_rank_10.jsonl"]


def test_natural_key_orders_numbers_by_value_and_ignores_case():
    names = ["Run_10", "run_9", "run_1"]
    assert sorted(names, key=natural_key) == ["run_1", "run_9", "Run_10"]


def test_recurses_into_subdirs(tmp_path):
    _touch(tmp_path, "top.jsonl", "exp_a/rollout_data_rank_0.jsonl",
           "exp_b/deep/rollout_data_rank_1.jsonl")
    assert _rels(tmp_path) == ["exp_a/rollout_data_rank_0.jsonl",
                               "exp_b/deep/rollout_data_rank_1.jsonl", "top.jsonl"]


def test_paths_are_absolute_under_root_and_rel_uses_forward_slashes(tmp_path):
    _touch(tmp_path, "exp/sub/rollout_data_rank_4.jsonl")
    (found,) = discover(tmp_path)
    assert found.path == tmp_path / "exp" / "sub" / "rollout_data_rank_4.jsonl"
    assert found.rel == "exp/sub/rollout_data_rank_4.jsonl"
    assert found.rank == 4


def test_skips_hidden_dirs_cache_and_git(tmp_path):
    _touch(tmp_path, "rollout_data_rank_0.jsonl", f"{CACHE_DIR_NAME}/rollout_data_rank_0.jsonl",
           ".git/objects/x.jsonl", "exp/.hidden/rollout_data_rank_1.jsonl")
    assert _rels(tmp_path) == ["rollout_data_rank_0.jsonl"]


def test_skips_non_jsonl_and_hidden_files(tmp_path):
    _touch(tmp_path, "rollout_data_rank_0.jsonl", "notes.txt", "rollout.json",
           "rollout.jsonl.bak", ".partial.jsonl", "index.parquet")
    assert _rels(tmp_path) == ["rollout_data_rank_0.jsonl"]


def test_empty_dir_finds_nothing(tmp_path):
    assert discover(tmp_path) == []
    assert dump_dirs(tmp_path) == []


def test_each_file_carries_its_rank(tmp_path):
    _touch(tmp_path, "rollout_data_rank_3.jsonl", "samples.jsonl")
    ranks = {f.rel: f.rank for f in discover(tmp_path)}
    assert ranks == {"rollout_data_rank_3.jsonl": 3, "samples.jsonl": -1}


@pytest.mark.parametrize("name, rank", [
    ("rollout_data_rank_3.jsonl", 3),
    ("rollout_data_rank7.jsonl", 7),
    ("rollout_data_rank_val2.jsonl", 2),
    ("rollout_data_rank-5.jsonl", 5),
    ("rollout_data_RANK_12.jsonl", 12),
    ("rollout_data_rank_10.jsonl", 10),
    ("12.jsonl", -1),
    ("rollout_data.jsonl", -1),
])
def test_rank_of(name, rank):
    assert rank_of(name) == rank


def test_dump_dirs_lists_root_and_sub_runs(tmp_path):
    _touch(tmp_path, "rollout_data_rank_0.jsonl", "exp_10/rollout_data_rank_0.jsonl",
           "exp_2/rollout_data_rank_0.jsonl", "exp_2/rollout_data_rank_1.jsonl",
           "exp_3/nested/rollout_data_rank_0.jsonl", "only_text/readme.txt",
           f"{CACHE_DIR_NAME}/rollout_data_rank_0.jsonl")
    assert dump_dirs(tmp_path) == [".", "exp_2", "exp_3/nested", "exp_10"]


def test_dump_dirs_without_top_level_files_has_no_dot(tmp_path):
    _touch(tmp_path, "a/x.jsonl", "b/y.jsonl")
    assert dump_dirs(tmp_path) == ["a", "b"]


def test_dump_dirs_respects_limit(tmp_path):
    _touch(tmp_path, *(f"run_{i}/x.jsonl" for i in range(5)))
    assert dump_dirs(tmp_path, limit=2) == ["run_0", "run_1"]
