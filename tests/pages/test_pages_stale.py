"""A sample whose line changed on disk after the board indexed it: the Sample and Responses
pages show the error, never its values, re-parse the file once by themselves and recover to
what the file says now; a file that stays stale gets a button instead of a rerun loop."""
import os

import pytest
from apptest import board, errors, texts
from dump_files import edit_in_place, make_sample, write_dump

from loaders.serve.catalog import Catalog

NAME = "rollout_data_rank_0.jsonl"
KEY = f"{NAME}:6"  # step 1, reward 0.28
NEXT = f"{NAME}:7"  # step 1, reward 0.29


@pytest.fixture
def dump(tmp_path):
    root = tmp_path / "stale"
    write_dump(root / NAME, [make_sample(i // 5, seed=i, reward=round(0.23 + i / 100, 2),
                                         prompt=f"Prompt {i}") for i in range(15)])
    return root


def _edit(path, old: bytes, new: bytes) -> None:
    """Overwrite `old` with a same-length `new` in place, restoring the mtime, so only the
    line's own check can tell."""
    stat = path.stat()
    edit_in_place(path, old, new)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def _rewards(at) -> list[str]:
    return [m.value for m in at.metric if m.label == "reward"]


def _opened_then_edited(dump):
    """The board showing another sample of the step (the index built, KEY not read yet),
    then KEY's reward edited on disk and KEY chosen."""
    at = board(dump, page="sample", step="1", sample=NEXT)
    assert not at.exception and _rewards(at) == ["0.29"]
    _edit(dump / NAME, b'"reward":0.28,', b'"reward":0.97,')
    return at.selectbox(key="sample").set_value(KEY).run()


def test_sample_page_recovers_to_the_new_value_and_never_shows_both(dump):
    at = _opened_then_edited(dump)
    assert not at.exception, at.exception
    assert _rewards(at) == ["0.97"] and not errors(at)
    shown = texts(at) + "".join(str(m.value) for m in at.metric)
    assert "0.28" not in shown
    again = board(dump, page="sample", step="1", sample=KEY)  # a fresh session agrees
    assert _rewards(again) == ["0.97"]


def test_a_file_that_stays_stale_shows_the_error_and_a_button_not_a_loop(dump, monkeypatch):
    calls = []
    monkeypatch.setattr(Catalog, "reparse", lambda self, path, files, progress=None:
                        calls.append(set(files)) or self.run(path))
    at = _opened_then_edited(dump)
    assert calls == [{NAME}] and not at.exception
    assert any("changed on disk" in e for e in errors(at)) and not _rewards(at)
    assert "0.97" not in texts(at) and "0.28" not in texts(at)
    # beside the previous / next sample buttons
    assert [b.label for b in at.main.button if b.key not in ("s_j", "s_k")] == [
        "Reload changed file"]
    at.run()
    assert calls == [{NAME}]  # the same version is not re-parsed by itself again
    at.button(key="reload_stale").click().run()
    assert calls == [{NAME}, {NAME}] and not _rewards(at)


def test_responses_search_reports_a_stale_file_and_recovers(dump):
    at = board(dump, page="responses", step="1")
    assert "5 of 5 samples" in texts(at)
    _edit(dump / NAME, b'"Prompt 6"', b'"Prompt X"')
    at.text_input(key="q").input("Prompt [6X]").run()
    assert not at.exception and not errors(at)
    assert "1 of 5 samples" in texts(at) and "Prompt X" in texts(at) + _html(at)
    assert "Prompt 6" not in texts(at) + _html(at)


def _html(at) -> str:
    return "".join(h.proto.body for h in at.get("html"))
