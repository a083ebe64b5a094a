"""Which dump dirs the board may open: resolution, and confinement under a root."""
import os
from pathlib import Path

import pytest

from loaders.find.paths import resolve_dump_dir


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """root/ with runs/a inside, and an outside/ dir next to it."""
    root = tmp_path / "root"
    inside = root / "runs" / "a"
    outside = tmp_path / "outside"
    inside.mkdir(parents=True)
    outside.mkdir()
    return {"root": root, "inside": inside, "outside": outside}


def _refused(result: tuple, typed: str) -> None:
    path, message = result
    assert path is None
    assert message.startswith("Refused: ") and typed in message


@pytest.mark.parametrize("typed", ["", "   ", "\t\n"])
@pytest.mark.parametrize("with_root", [False, True])
def test_empty_input_asks_for_a_dir(tree, typed, with_root):
    root = str(tree["root"]) if with_root else None
    assert resolve_dump_dir(typed, root) == (None, "Enter a dump dir.")


def test_missing_dir_without_root(tmp_path):
    missing = tmp_path / "nope"
    path, message = resolve_dump_dir(str(missing), None)
    assert path is None and message == f"No such directory: {missing.resolve()}"


def test_a_file_is_not_a_dir(tmp_path):
    file = tmp_path / "dump.jsonl"
    file.write_text("{}\n")
    path, message = resolve_dump_dir(str(file), None)
    assert path is None and message.startswith("No such directory")


def test_existing_dir_without_root_is_resolved(tree, monkeypatch):
    assert resolve_dump_dir(str(tree["outside"]), None) == (tree["outside"].resolve(), None)
    # surrounding whitespace is ignored, relative paths resolve against the cwd
    monkeypatch.chdir(tree["root"])
    assert resolve_dump_dir("  runs/a  ", None) == (tree["inside"].resolve(), None)
    assert resolve_dump_dir("runs/../runs/a", None) == (tree["inside"].resolve(), None)


def test_relative_path_resolves_under_root(tree, monkeypatch):
    monkeypatch.chdir(tree["outside"])  # the cwd must not matter when a root is set
    assert resolve_dump_dir("runs/a", str(tree["root"])) == (tree["inside"].resolve(), None)


def test_absolute_path_inside_root(tree):
    assert resolve_dump_dir(str(tree["inside"]), str(tree["root"])) == \
        (tree["inside"].resolve(), None)


def test_root_itself_is_allowed(tree):
    root = str(tree["root"])
    assert resolve_dump_dir(root, root) == (tree["root"].resolve(), None)
    assert resolve_dump_dir(".", root) == (tree["root"].resolve(), None)


def test_missing_dir_inside_root(tree):
    path, message = resolve_dump_dir("runs/b", str(tree["root"]))
    assert path is None and message == f"No such directory: {(tree['root'] / 'runs/b').resolve()}"


@pytest.mark.parametrize("typed", ["../outside", "runs/../../outside", "runs/a/../../.."])
def test_dotdot_escaping_the_root_is_refused(tree, typed):
    _refused(resolve_dump_dir(typed, str(tree["root"])), typed)


def test_absolute_path_outside_root_is_refused(tree):
    typed = str(tree["outside"])
    _refused(resolve_dump_dir(typed, str(tree["root"])), typed)


def test_sibling_with_root_as_name_prefix_is_refused(tree):
    sibling = tree["root"].parent / (tree["root"].name + "_evil")
    sibling.mkdir()
    _refused(resolve_dump_dir(str(sibling), str(tree["root"])), str(sibling))


def test_dotdot_staying_inside_root_is_allowed(tree):
    assert resolve_dump_dir("runs/a/../a", str(tree["root"])) == (tree["inside"].resolve(), None)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlink_leading_outside_is_refused(tree):
    link = tree["root"] / "escape"
    link.symlink_to(tree["outside"], target_is_directory=True)
    assert link.is_dir()  # a real dir to open, were it not outside the root
    _refused(resolve_dump_dir("escape", str(tree["root"])), "escape")
    _refused(resolve_dump_dir(str(link), str(tree["root"])), str(link))


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlink_staying_inside_root_is_allowed(tree):
    link = tree["root"] / "shortcut"
    link.symlink_to(tree["inside"], target_is_directory=True)
    assert resolve_dump_dir("shortcut", str(tree["root"])) == (tree["inside"].resolve(), None)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_root_given_through_a_symlink(tree, tmp_path):
    alias = tmp_path / "alias"
    alias.symlink_to(tree["root"], target_is_directory=True)
    assert resolve_dump_dir(str(alias / "runs" / "a"), str(alias)) == \
        (tree["inside"].resolve(), None)


def test_home_is_expanded(tree, monkeypatch):
    monkeypatch.setenv("HOME", str(tree["root"]))
    assert resolve_dump_dir("~/runs/a", None) == (tree["inside"].resolve(), None)
    assert resolve_dump_dir("~/runs/a", "~") == (tree["inside"].resolve(), None)


@pytest.mark.parametrize("typed", ["a\x00b", "x" * 5000, "/" + "y" * 300])
def test_unusable_paths_get_a_short_message(typed, tmp_path):
    for root in (None, str(tmp_path)):
        path, error = resolve_dump_dir(typed, root)
        assert path is None and error.startswith(("Not a usable path", "Refused"))
        assert len(error) < 500


def test_a_symlink_loop_is_refused_not_raised(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    path, error = resolve_dump_dir(str(tmp_path / "a"), None)
    assert path is None and "Not a usable path" in error
