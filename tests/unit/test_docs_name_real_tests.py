"""The threat model names its tests: every row of docs/security.md's tables names at least one
test, and every test the documents name (``tests/…py::name``, ``::name`` for the same file; the
README and every page of docs/) is a test function that exists, so a renamed or deleted test
cannot leave a threat, or any claim held by a test, guarded in the document's words only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = ("README.md", *sorted(f"docs/{page.name}" for page in (ROOT / "docs").glob("*.md")))
#: Documents that name tests, so that a change to the reference's form, which would find none
#: in them, cannot pass for every named test existing.
CITING = (
    "README.md",
    "docs/security.md",
    "docs/operations.md",
    "docs/fairness.md",
    "docs/operator.md",
)
#: Threats whose control lives outside the service (a buffering proxy in front), so no test of
#: the service can hold them: docs/operations.md says how to deploy it.
OUTSIDE_THE_SERVICE = ["Slow clients holding workers"]
REFERENCE = re.compile(r"`(tests/[\w/]+\.py)?(?:::(\w+))?`")


def references(text: str) -> list[tuple[str, str | None]]:
    """(file, test or None) for each reference, ``::name`` read against the file before it."""
    found: list[tuple[str, str | None]] = []
    current = ""
    for match in REFERENCE.finditer(text):
        path, name = match[1], match[2]
        if path is None and name is None:
            continue
        current = path or current
        assert current, f"{match[0]} names no file before it"
        found.append((current, name))
    return found


def defines(path: str, name: str) -> bool:
    return re.search(rf"^(?:async )?def {name}\(", (ROOT / path).read_text(), re.M) is not None


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_named_test_exists(document: str) -> None:
    named = references((ROOT / document).read_text())
    assert named or document not in CITING, f"{document} no longer names its tests"
    missing = [
        f"{path}::{name}" if name else path
        for path, name in named
        if not (ROOT / path).is_file() or (name is not None and not defines(path, name))
    ]
    assert missing == []


def test_every_threat_names_a_test() -> None:
    rows = [
        line
        for line in (ROOT / "docs/security.md").read_text().splitlines()
        if line.startswith("| ") and not line.startswith(("| Threat ", "| ---"))
    ]
    assert rows, "the threat tables are gone"
    unguarded = [row.split("|")[1].strip() for row in rows if not references(row.split("|")[-2])]
    assert unguarded == OUTSIDE_THE_SERVICE
