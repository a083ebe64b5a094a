"""Groups and Metrics each keep their own URL parameter: the group opened on Groups (`gid`)
and the metric group chosen on Metrics (`group`) never leak into each other (through the
real board, AppTest via the entry script; the URL itself: tests/browser/test_browser_links)."""
import metric_fixtures as M
import pytest
from apptest import board, errors, goto, texts

from loaders import open_run
from loaders.serve.groups import GroupOptions
from samples.generate_dump import write_dump as generate


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("grouped_metrics")
    generate(root, steps=3, ranks=1, samples_per_rank=16, max_tokens=32, seed=7, group_size=4)
    M.write_verl_file(root / "logs" / "metrics.jsonl", M.healthy())
    return root


def _a_group(root) -> str:
    """A group id at step 1; a negative one when there is one (its "-" is Markdown's)."""
    ids = open_run(root).trained().groups().step(1, GroupOptions()).table.index
    return str(min(ids))


def test_a_metric_group_does_not_open_as_a_group_on_groups(run_dir):
    at = goto(board(run_dir, step="1"), "metrics")
    at.selectbox(key="group").set_value("actor").run()
    at = goto(at, "groups")
    assert not errors(at)
    assert "No group" not in texts(at)
    assert at.text_input(key="gid").value == ""


def test_an_earlier_link_naming_a_group_still_opens_it(run_dir):
    group = _a_group(run_dir)
    at = board(run_dir, step="1", page="groups", group=group)  # a fresh session
    assert not errors(at)
    assert at.text_input(key="gid").value == group
    assert "No group" not in texts(at)
