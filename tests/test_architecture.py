"""The import rules of the house, each checked over files the test shows it found and each
shown to flag a planted violation, so no rule can pass by scanning nothing:

- loaders/ (the data core) never imports streamlit;
- the pure builders (pages/figures/, pages/frame/view.py) never import streamlit;
- the UI (pages/, rl_logging_board.py) never opens files nor imports json, orjson, pyarrow
  or the parser modules (loaders.parse, loaders.index);
- loaders/ never imports pages/;
- no module of loaders/ or pages/ is in an import cycle: the route table (pages.routes)
  imports the routes and the frame (pages.frame), and neither imports it back.
"""
import shutil
from collections.abc import Callable
from pathlib import Path

import import_rules as R
import pytest
from dump_files import ROOT

UI = ("pages", "rl_logging_board.py")
PURE = ("pages/figures", "pages/frame/view.py")


def streamlit_in_loaders(root: Path) -> list[str]:
    return R.importers(root, R.python_files(root, "loaders"), ["streamlit"])


def streamlit_in_pure_builders(root: Path) -> list[str]:
    return R.importers(root, R.python_files(root, *PURE), ["streamlit"])


def ui_reads_files(root: Path) -> list[str]:
    return R.file_readers(root, R.python_files(root, *UI))


def ui_imports_parsers(root: Path) -> list[str]:
    return R.importers(root, R.python_files(root, *UI), R.PARSER_MODULES)


def loaders_import_cycle(root: Path) -> list[str]:
    return R.find_cycle(R.loaders_import_graph(root))


def import_cycle(root: Path) -> list[str]:
    """A cycle anywhere: the data core, the frame, the routes (and the route table, which
    imports the routes and the frame: a route or the frame importing it closes one)."""
    return R.find_cycle(R.import_graph(root, "loaders", "pages"))


def loaders_import_pages(root: Path) -> list[str]:
    return R.importers(root, R.python_files(root, "loaders"), ["pages"])


RULES = (streamlit_in_loaders, streamlit_in_pure_builders, ui_reads_files, ui_imports_parsers,
         loaders_import_cycle, import_cycle, loaders_import_pages)


def _scanned(*places: str) -> set[str]:
    return {str(f.relative_to(ROOT)) for f in R.python_files(ROOT, *places)}


def test_the_rules_scan_the_real_tree():
    loaders, ui, pure = _scanned("loaders"), _scanned(*UI), _scanned(*PURE)
    assert len(loaders) >= 40 and len(ui) >= 20 and len(pure) >= 8
    assert {"loaders/serve/run.py", "loaders/health/signals.py"} <= loaders
    assert {"pages/figures/tables.py", "pages/routes/sample/__init__.py", "pages/frame/view.py",
            "pages/routes/runs/choice.py", "rl_logging_board.py"} <= ui
    assert {"pages/figures/tables.py", "pages/frame/view.py"} <= pure
    graph = R.loaders_import_graph(ROOT)
    assert len(graph) == len(loaders) and "loaders.schema" in graph["loaders.serve.run"]
    everything = R.import_graph(ROOT, "loaders", "pages")
    assert len(everything) == len(loaders) + len(ui) - 1  # the entry script is no module
    assert {"pages.frame.board", "pages.routes.runs"} <= everything["pages.routes"]
    assert "pages.routes" not in everything["pages.frame.board"]


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.__name__)
def test_the_tree_keeps_the_rule(rule: Callable[[Path], list[str]]):
    assert rule(ROOT) == []


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the checked sources to plant violations in."""
    ignore = shutil.ignore_patterns("__pycache__")
    for folder in ("loaders", "pages"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=ignore)
    shutil.copy(ROOT / "rl_logging_board.py", tmp_path)
    return tmp_path


PLANTED = [  # (rule, file, code appended to it or making it up)
    (streamlit_in_loaders, "loaders/find/planted.py", "import streamlit as st\n"),
    (streamlit_in_loaders, "loaders/health/views.py", "def f():\n    import streamlit\n"),
    (streamlit_in_pure_builders, "pages/figures/planted.py",
     "from streamlit import session_state\n"),
    (streamlit_in_pure_builders, "pages/frame/view.py", "import streamlit.components.v1\n"),
    (ui_reads_files, "pages/routes/planted.py",
     "from pathlib import Path\nPath('x').read_text()\n"),
    (ui_reads_files, "rl_logging_board.py", "with open('x') as f:\n    pass\n"),
    (ui_reads_files, "pages/planted.py", "import os\nos.open('x', os.O_RDONLY)\n"),
    (ui_reads_files, "pages/figures/planted.py", "def f(p):\n    return p.read_bytes()\n"),
    (ui_imports_parsers, "pages/planted.py", "def f():\n    import orjson\n"),
    (ui_imports_parsers, "pages/routes/planted.py", "import pyarrow.parquet as pq\n"),
    (ui_imports_parsers, "pages/figures/planted.py", "from loaders.parse import record\n"),
    (ui_imports_parsers, "rl_logging_board.py", "from loaders.index.pool import scan_chunk\n"),
    (loaders_import_pages, "loaders/serve/planted.py", "from pages.figures import text\n"),
]


def _plant(tree: Path, path: str, code: str) -> None:
    target = tree / path
    target.write_text((target.read_text() if target.exists() else "") + "\n" + code)


@pytest.mark.parametrize(("rule", "path", "code"), PLANTED,
                         ids=[f"{rule.__name__}:{path}" for rule, path, _ in PLANTED])
def test_each_file_rule_flags_a_planted_violation(tree: Path, rule: Callable[[Path], list[str]],
                                                  path: str, code: str):
    assert rule(tree) == []
    _plant(tree, path, code)
    assert rule(tree) == [path]


@pytest.mark.parametrize(("path", "code", "member"), [
    ("loaders/schema.py", "def late():\n    from loaders.serve.run import open_run\n",
     "loaders.schema"),
    ("loaders/find/kind.py", "from . import walk\n", "loaders.find.kind"),  # relative
])
def test_the_cycle_rule_flags_a_planted_cycle(tree: Path, path: str, code: str, member: str):
    assert loaders_import_cycle(tree) == []
    _plant(tree, path, code)
    cycle = loaders_import_cycle(tree)
    assert member in cycle and cycle[0] == cycle[-1] and len(cycle) >= 3, cycle


@pytest.mark.parametrize(("path", "code", "member"), [
    ("pages/frame/view.py", "def late():\n    from pages.routes import ROUTES\n", "pages.routes"),
    ("pages/routes/runs/choice.py", "from pages.routes import main\n", "pages.routes.runs.choice"),
    ("pages/frame/loading.py", "from pages.frame import board\n", "pages.frame.loading"),
])
def test_the_cycle_rule_flags_a_planted_cycle_in_the_pages(tree: Path, path: str, code: str,
                                                            member: str):
    assert import_cycle(tree) == []
    _plant(tree, path, code)
    cycle = import_cycle(tree)
    assert member in cycle and cycle[0] == cycle[-1] and len(cycle) >= 3, cycle


def test_the_package_re_exports_are_the_one_edge_left_out():
    init = ROOT / "loaders/__init__.py"
    assert "loaders.serve.run" in R.imported_names(ROOT, init)  # so the rule would bite
    assert R.loaders_import_graph(ROOT)["loaders"] == set()


def test_cycle_finder_on_small_graphs():
    assert R.find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert R.find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert R.find_cycle({"x": {"a"}, "a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]


_WORKER_MODULES = """
import sys


def modules():
    import loaders.index.pool  # what a worker unpickling scan_chunk imports
    # pandas and pyarrow each cost a worker tens of MB: a jsonl scan needs neither
    return "pandas" in sys.modules or "pyarrow" in sys.modules, "loaders.serve.run" in sys.modules
"""
# run with -c, as `python -m loaders` and the server's guarded launcher start: the workers
# then re-import nothing of the parent's main module
_PARENT = """
import multiprocessing, sys
from concurrent.futures import ProcessPoolExecutor

import loaders
from worker_modules import modules

assert "loaders.serve.run" in sys.modules  # eager in the main process
assert loaders.open_run.__module__ == "loaders.serve.open_run"
with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("forkserver")) as pool:
    print(pool.submit(modules).result())
"""


def test_parser_workers_stay_free_of_pandas_while_the_package_exports_eagerly(tmp_path):
    """In a fresh interpreter: the probe must not carry what an earlier test imported."""
    import os
    import subprocess
    import sys

    (tmp_path / "worker_modules.py").write_text(_WORKER_MODULES)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    done = subprocess.run([sys.executable, "-c", _PARENT], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(False, False)"
