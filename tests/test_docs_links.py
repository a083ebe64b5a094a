"""The README is the front door and docs/ the reference: every relative link in them resolves,
to a file that exists and, with a #fragment, to a heading in it."""
from __future__ import annotations

import re
from pathlib import Path

from dump_files import ROOT

_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} (.+?)\s*$", re.MULTILINE)
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def anchors(text: str) -> set[str]:
    """GitHub's anchors of a Markdown file's headings (lower case, punctuation dropped)."""
    return {re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
            for title in _HEADING.findall(text)}


def broken_links(page: Path) -> list[str]:
    found = []
    for target in _LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):  # http(s):, mailto: ...: not ours to check here
            continue
        path, _, fragment = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            found.append(f"{page.name}: {target} (no such file)")
        elif fragment and file.suffix == ".md" and fragment not in anchors(file.read_text()):
            found.append(f"{page.name}: {target} (no such heading)")
    return found


def test_every_relative_link_in_the_readme_and_docs_resolves():
    assert len(DOCS) >= 9, [p.name for p in DOCS]
    assert [broken for page in DOCS for broken in broken_links(page)] == []


def test_the_checker_flags_a_missing_file_and_a_missing_heading(tmp_path: Path):
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# There\n\n## A heading, with punctuation!\n")
    page.write_text("[ok](there.md#a-heading-with-punctuation) [gone](gone.md) "
                    "[bad](there.md#nowhere) [self](#here) [web](https://x.org/a)\n\n## Here\n")
    assert broken_links(page) == ["page.md: gone.md (no such file)",
                                  "page.md: there.md#nowhere (no such heading)"]


def test_the_readme_is_a_front_door():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 150, len(lines)
