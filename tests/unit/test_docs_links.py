"""The documents point only at what the repository holds: a third party reading a clone has
nothing else. Every Markdown file the README, the docs, the code or the tests name is a file
of the repository, and every Markdown link into a document lands on one of its headings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
SOURCES = sorted(
    path
    for folder in ("sota_casino", "tests", "bench", "ops")
    for pattern in ("*.py", "*.html", "*.js")
    for path in (ROOT / folder).rglob(pattern)
)
NAMED = re.compile(r"(?<![\w/.-])([\w./-]*\w\.md)\b")
LINK = re.compile(r"\]\(([^)\s]*?)(?:#([^)\s]+))?\)")


def resolves(name: str, beside: Path) -> bool:
    """Whether ``name`` is a file beside the one naming it, in docs/ or from the root."""
    return any((base / name).is_file() for base in (beside.parent, ROOT / "docs", ROOT))


def anchors(document: Path) -> set[str]:
    """The anchors of a document's headings, as GitHub makes them."""
    headings = re.findall(r"^#+ (.+)$", document.read_text(encoding="utf-8"), re.M)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def test_every_named_document_is_in_the_repository() -> None:
    missing = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in DOCUMENTS + SOURCES
        for name in NAMED.findall(path.read_text(encoding="utf-8"))
        if not resolves(name, path)
    ]
    assert missing == []


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_lands_on_a_file_and_heading(document: Path) -> None:
    broken = []
    for target, anchor in LINK.findall(document.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        linked = (document.parent / target).resolve() if target else document
        if not linked.exists():
            broken.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}#{anchor}")
    assert broken == []
