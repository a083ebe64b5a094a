"""The tests of the real server: those in Chromium (test_browser_*.py) are skipped, saying
so, on a machine without it ($RL_BOARD_CHROMIUM; tests/run.sh finds Debian's, and with
CI=true refuses to run without it).  start.sh's and the bind's tests need no browser."""
from __future__ import annotations

import pytest
from browser import chromium_path

IN_CHROMIUM = "test_browser"  # the file names of the tests that drive a browser


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    skip = pytest.mark.skipif(not chromium_path(), reason="no Chromium (RL_BOARD_CHROMIUM)")
    for item in items:
        if item.path.parent.name == "browser" and item.path.name.startswith(IN_CHROMIUM):
            item.add_marker(skip)
