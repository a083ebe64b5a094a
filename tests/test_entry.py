"""The entry script: Streamlit runs it as __main__; the parser pool's forkserver imports it as
__mp_main__ (when a pool first starts during a page run) and must not run the board there."""
import runpy

from apptest import ENTRY


def test_the_board_runs_as_main_and_not_in_the_parser_pools_forkserver(monkeypatch):
    calls = []
    monkeypatch.setattr("pages.routes.main", calls.append)
    runpy.run_path(ENTRY, run_name="__mp_main__")
    assert calls == []
    runpy.run_path(ENTRY, run_name="__main__")
    assert len(calls) == 1
