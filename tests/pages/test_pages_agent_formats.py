"""Every multi-turn trainer format through every page of the real board (AppTest)."""

import agent_format_fixtures as A
import pytest
from apptest import board, errors, goto, texts
from torch_dumps import slime_run

from pages.routes import BY_PATH as PAGES

WRITERS = {**A.ALL, "slime": slime_run}
# a multi-turn sample of each format, for the Sample page's conversation view
OPENED = {"verl": {"step": "3", "sample": "rollout/3.jsonl:2"},
          "skyrl": {"split": "validation"}}


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_every_page_renders_each_agent_format(tmp_path, name):
    root = WRITERS[name](tmp_path / name)
    at = board(root)
    assert not at.exception and not errors(at), errors(at)
    for page in PAGES:
        at = goto(at, page)
        assert not at.exception, (page, at.exception)
        assert not errors(at), (page, errors(at))
    at = board(root, page="sample", **OPENED.get(name, {}))
    assert "Conversation ·" in texts(at), name
