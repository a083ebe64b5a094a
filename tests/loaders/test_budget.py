"""The memory budget of loaded runs: least recently used runs beyond it leave their catalogs."""
from __future__ import annotations

from dump_files import make_sample, write_dump

from loaders.serve import budget as budget_module
from loaders.serve.budget import Budget, budget_bytes, run_bytes
from loaders.serve.catalog import Catalog


class _Value:
    pass


class _Holder:
    def __init__(self) -> None:
        self.dropped: list[str] = []

    def drop(self, key, value) -> None:
        self.dropped.append(key)


def test_least_recently_used_beyond_the_budget_are_dropped():
    budget, holder = Budget(limit=250), _Holder()
    values = {name: _Value() for name in "abc"}
    budget.admit(holder, "a", values["a"], 100)
    budget.admit(holder, "b", values["b"], 100)
    budget.touch(holder, "a")  # a is now more recent than b
    budget.admit(holder, "c", values["c"], 100)
    assert holder.dropped == ["b"] and budget.used() == 200


def test_the_last_used_value_stays_even_when_alone_over_the_budget():
    budget, holder = Budget(limit=10), _Holder()
    big = _Value()
    budget.admit(holder, "big", big, 1000)
    assert holder.dropped == [] and budget.used() == 1000


def test_budget_from_the_environment(monkeypatch):
    monkeypatch.setenv(budget_module.BUDGET_ENV, "64")
    assert budget_bytes() == 64 * 2**20
    monkeypatch.setenv(budget_module.BUDGET_ENV, "lots")
    assert budget_bytes() == budget_module.DEFAULT_MB * 2**20


def test_catalogs_share_one_budget_and_reload_what_it_dropped(tmp_path, monkeypatch):
    runs = []
    for name in ("a", "b", "c"):
        write_dump(tmp_path / name / "rollout_data_rank_0.jsonl",
                   [make_sample(step, seed=i) for step in range(3) for i in range(4)])
        runs.append(tmp_path / name)
    catalogs = [Catalog(path) for path in runs]
    first = catalogs[0].run(runs[0])
    monkeypatch.setattr(budget_module.BUDGET, "limit", int(run_bytes(first) * 2.5))
    try:
        for catalog, path in zip(catalogs[1:], runs[1:]):
            catalog.run(path)
        assert catalogs[0].loaded() == []  # the least recently used, beyond the budget
        assert [c.loaded() for c in catalogs[1:]] == [[runs[1]], [runs[2]]]
        again = catalogs[0].run(runs[0])  # opened again from its index
        assert again is not first and again.cache == "hit"
        assert catalogs[1].loaded() == []
    finally:
        monkeypatch.setattr(budget_module.BUDGET, "limit", None)
