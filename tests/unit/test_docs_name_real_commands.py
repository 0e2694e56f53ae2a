"""The README and the docs name only commands and paths that exist: every `make TARGET` is a
target of the Makefile, every ``flask`` command (with the options it is shown with) is one the
app registers, every command the app registers is in the README's table of commands, and every
path of the repository the README names is there. A newcomer copies them as written."""

from __future__ import annotations

import re
from pathlib import Path

import click
from flask import Flask
from flask.cli import FlaskGroup

from sota_casino import cli

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCUMENTS = sorted([README, *(ROOT / "docs").glob("*.md")])
#: Made by running the project, never kept in the repository (.gitignore).
MADE = ("build/", "instance/", ".venv/")
LANGS = ("fi", "nb", "pt")
SPAN = re.compile(r"`([^`\n]+)`")


def spans(text: str) -> list[str]:
    """The inline code of a Markdown text, and the lines of its fenced blocks."""
    fenced = re.findall(r"^```\w*\n(.*?)^```", text, re.M | re.S)
    outside = re.sub(r"^```\w*\n.*?^```", "", text, flags=re.M | re.S)
    return SPAN.findall(outside) + [line for block in fenced for line in block.splitlines()]


def section(title: str) -> str:
    return README.read_text(encoding="utf-8").split(f"\n## {title}\n", 1)[1].split("\n## ")[0]


def commands() -> dict[str, click.Command]:
    """Every command of ``flask --app app``, by its words (``audit verify``): Flask's own and
    the app's."""
    app = Flask(__name__)
    cli.init_app(app)
    found: dict[str, click.Command] = {}

    def walk(words: str, command: click.Command) -> None:
        found[words] = command
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(f"{words} {name}", sub)

    for name, command in {**FlaskGroup().commands, **app.cli.commands}.items():
        walk(name, command)
    return found


def flask_command(line: str) -> tuple[str, list[str]] | None:
    """The command words and the options of a ``flask`` command line, or None if it is none."""
    match = re.search(r"(?:^|[\s/])flask (?:--app app )?([^#]*)", line)
    if match is None or match[1].strip() in ("", "COMMAND", "--help"):
        return None
    tokens = match[1].replace("[", " ").replace("]", " ").split()
    words = []
    for token in tokens:
        if not re.fullmatch(r"[a-z][a-z-]*", token):
            break
        words.append(token)
    return " ".join(words), [t.split("=")[0] for t in tokens if t.startswith("--")]


def test_every_make_target_named_is_in_the_makefile() -> None:
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.M))
    named = {
        f"{document.name}: {target}"
        for document in DOCUMENTS
        for span in spans(document.read_text(encoding="utf-8"))
        for target in re.findall(r"(?:^|[;&|(]\s*)make ([\w-]+)", span)
    }
    assert named, "the documents no longer name make targets"
    assert {name for name in named if name.split(": ")[1] not in targets} == set()


def test_every_flask_command_named_exists_with_its_options() -> None:
    known = commands()
    shown = [
        (document.name, found)
        for document in DOCUMENTS
        for span in spans(document.read_text(encoding="utf-8"))
        if (found := flask_command(span))
    ]
    # The README's table writes its commands without ``flask``, several to a row.
    for row in re.findall(r"^\| (`.*?) \|", section("Commands"), re.M):
        shown += [
            ("README.md", found)
            for span in SPAN.findall(row)
            if (found := flask_command(f"flask {span}"))
        ]
    assert len(shown) > 20, "the documents no longer name flask commands"
    wrong = []
    for document, (words, options) in shown:
        command = known.get(words)
        if command is None:
            wrong.append(f"{document}: flask {words}")
            continue
        taken = {name for param in command.params for name in param.opts}
        wrong += [f"{document}: flask {words} {o}" for o in options if o not in taken]
    assert wrong == []


def test_the_readme_lists_every_command_the_app_has() -> None:
    listed = {
        words
        for row in re.findall(r"^\| (`.*?) \|", section("Commands"), re.M)
        for span in SPAN.findall(row)
        if (found := flask_command(f"flask {span}")) and (words := found[0])
    }
    flasks_own = set(FlaskGroup().commands)
    runnable = {
        words
        for words, command in commands().items()
        if not isinstance(command, click.Group) and words.split()[0] not in flasks_own
    }
    assert runnable - listed == set()


def test_every_path_the_readme_names_is_in_the_repository() -> None:
    """A path from the root (``sota_casino/config.py``), alone or in a command line, or one a
    row of "What is where" names under the row's own folder (``unit/`` under ``tests/``);
    placeholders in capitals stand for each language's code, and a test a path names
    (``tests/….py::name``) is defined there."""
    tops = {path.name for path in ROOT.iterdir()}
    missing = []
    text = README.read_text(encoding="utf-8")
    rows = dict(re.findall(r"^(\| `([\w./]+/)`.*)$", section("What is where"), re.M))
    for span in SPAN.findall(text):
        for word in span.split():
            name, _, test = word.partition("::")
            if not re.fullmatch(r"[\w.][\w./-]*/[\w./-]*", name) or name.startswith(MADE):
                continue
            if name.split("/")[0] in tops:
                candidates = [name]
            else:
                candidates = [f"{top}{name}" for row, top in rows.items() if f"`{span}`" in row]
                candidates += [f"sota_casino/{name}"]
            paths = [ROOT / c.replace("LANG", lang) for c in candidates for lang in LANGS]
            found = [path for path in paths if path.exists()]
            if not found or (test and f"def {test}(" not in found[0].read_text()):
                missing.append(word)
    assert missing == []
