"""The import rules of the house: loaders/ never imports streamlit; pages never open files."""
import ast
from pathlib import Path

from conftest import ROOT

UI_FREE = ["loaders"]
UI = ["pages", "board"]
FORBIDDEN_IN_UI = {"json", "orjson", "pyarrow", "pyarrow.parquet", "loaders.parse.record",
                   "loaders.index.pool", "loaders.index.ondisk"}


def _python_files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def _calls(path: Path) -> set[str]:
    return {node.func.id for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}


def test_loaders_never_import_streamlit():
    files = [f for folder in UI_FREE for f in _python_files(folder)]
    assert files
    for path in files:
        assert not any(n.split(".")[0] == "streamlit" for n in _imports(path)), path


def test_ui_never_opens_files_or_parses_json():
    for path in [f for folder in UI for f in _python_files(folder)]:
        assert not (_imports(path) & FORBIDDEN_IN_UI), path
        assert "open" not in _calls(path), path


def _worker_modules() -> tuple[bool, bool]:
    """Run inside a parser worker: what importing the scan function pulled in."""
    import sys

    import loaders.index.pool  # noqa: F401  (what a worker unpickling scan_chunk imports)

    return "pandas" in sys.modules, "loaders.serve.run" in sys.modules


def test_parser_workers_stay_free_of_pandas_while_the_package_exports_eagerly():
    import multiprocessing
    import sys
    from concurrent.futures import ProcessPoolExecutor

    import loaders

    assert "loaders.serve.run" in sys.modules  # eager in the main process
    assert loaders.open_run.__module__ == "loaders.serve.run"
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        has_pandas, has_run = pool.submit(_worker_modules).result()
    assert (has_pandas, has_run) == (False, False)
