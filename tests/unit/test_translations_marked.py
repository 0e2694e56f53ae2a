"""Every text a player reads is marked for translation: the templates' words outside
``{% trans %}`` and ``_()``, the scripts' prose outside ``gettext()``/``ngettext()``, and the
refusals of the services that reach the pages outside ``N_()``.

What may stay as written: the game names (the seeds' own), the brand, and symbols. Code-like
strings (selectors, keys, URLs, CSS classes) are not prose and are left alone.
"""

from __future__ import annotations

import ast
import re
import warnings
from html.parser import HTMLParser
from pathlib import Path

import jinja2
import pytest
from babel.messages import jslexer

PACKAGE = Path(__file__).resolve().parents[2] / "sota_casino"
TEMPLATES = PACKAGE / "templates"
SCRIPTS = PACKAGE / "static" / "js"

#: Names that are the same in every language: the games as their players call them, the brand.
NAMES = (
    "Sota Casino",
    "Casino War",
    "Sota",
    "Krig",
    "Guerra",
    "Pjanitsa",
    "Rauha",
    "Ed25519",
    "SHA-256",
    "HMAC-SHA256",
    "JSON",
    "API",
    "CPU",
    "UTC",
)
WORD = re.compile(r"[^\W\d_]{2,}")
#: Attributes whose values are read out or shown.
SHOWN_ATTRIBUTES = frozenset({"title", "aria-label", "placeholder", "alt", "aria-description"})
#: Elements whose text is code, data or keys, not prose.
CODE_ELEMENTS = frozenset({"code", "kbd", "pre", "script", "style", "samp"})
#: What template code becomes in the HTML checked: a space keeps tags and words apart.
PLACEHOLDER = " "
#: HTML's boolean attributes a macro may write bare (``autofocus``).
BOOLEAN_ATTRIBUTES = "autofocus|checked|disabled|hidden|open|required|selected"
ATTRIBUTES_ONLY = re.compile(rf'\s*(([\w\-]+="[^"]*"|{BOOLEAN_ATTRIBUTES})\s*)+')


def _prose(text: str) -> bool:
    for name in NAMES:
        text = text.replace(name, " ")
    return bool(WORD.search(text))


class _ShownText(HTMLParser):
    """Collects the text and shown attributes of HTML (template code already blanked out)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.code_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in CODE_ELEMENTS:
            self.code_depth += 1
        for name, value in attrs:
            if name in SHOWN_ATTRIBUTES and value and _prose(value):
                self.found.append(f"{tag}[{name}]: {value}")

    def handle_endtag(self, tag: str) -> None:
        if tag in CODE_ELEMENTS and self.code_depth:
            self.code_depth -= 1

    def handle_data(self, data: str) -> None:
        if ATTRIBUTES_ONLY.fullmatch(data):
            return  # attributes a macro writes into a tag
        if not self.code_depth and _prose(data):
            self.found.append(data)


def _environment() -> jinja2.Environment:
    return jinja2.Environment(extensions=["jinja2.ext.i18n"])


#: Template functions that translate their first argument.
TRANSLATING = frozenset({"_", "gettext", "ngettext"})


def unmarked_template_text(
    source: str, translated_values: frozenset[str] = frozenset()
) -> list[str]:
    """Return the shown words of a template that no ``{% trans %}`` or ``_()`` covers, and
    each value it translates (``_(status)``) but the names in ``translated_values``: the
    extraction never sees what a value holds, so its words may be in no catalogue."""
    html: list[str] = []
    strings: list[str] = []
    in_trans = 0
    tag: list[str] = []  # the tokens of the current {% tag %} or {{ expression }}
    calls: list[str] = []  # the function (or macro, or filter) of each open parenthesis
    for token in _environment().lexer.tokenize(source):
        kind, value = token.type, str(token.value)
        if tag and tag[-1] == "(" and len(tag) > 1 and tag[-2] in TRANSLATING:
            if kind != "string" and value not in translated_values:
                strings.append(f"translated value {value!r}")
        if kind == "data":
            if not in_trans:
                html.append(value)
        elif kind in ("block_begin", "variable_begin"):
            tag, calls = [], []
            html.append(PLACEHOLDER)
            continue
        elif kind == "name" and not tag and value in ("trans", "endtrans"):
            in_trans += 1 if value == "trans" else -1
        elif kind == "lparen":
            calls.append(tag[-1] if tag else "")
        elif kind == "rparen" and calls:
            calls.pop()
        elif kind == "string" and not in_trans and _shown_string(value, tag, calls):
            strings.append(f"string {value!r}")
        if kind != "data":
            tag.append(value)
    shown = _ShownText()
    shown.feed("".join(html))
    shown.close()
    return [" ".join(text.split()) for text in shown.found] + strings


def _shown_string(value: str, tag: list[str], calls: list[str]) -> bool:
    """Tell whether a string literal in template code is prose shown as it is: not a message
    id, not a call's argument (URLs, macros, filters), not compared, not code-like."""
    if not _prose(value) or " " not in value and not value[:1].isupper():
        return False  # a key, a class, a file name: code
    if calls:
        return False  # translated (_, gettext, ngettext) or an argument of code
    return not (tag and tag[-1] in ("==", "!=", "in", "not"))


@pytest.mark.parametrize(
    "template",
    sorted(
        str(path.relative_to(TEMPLATES))
        for path in TEMPLATES.rglob("*.html")
        if "operator" not in path.parts
    ),
)
def test_every_shown_word_of_a_player_template_is_marked(template: str) -> None:
    found = unmarked_template_text(
        (TEMPLATES / template).read_text(), TRANSLATED_VALUES.get(template, frozenset())
    )
    assert found == []


#: The values templates translate, each holding only words the code marks with ``N_``: Sota's
#: presets and rule options (web/sota.py, the console's tables), alert kinds and a list's title
#: (web/operator_*.py). A code shown in words goes through ``term()``, its words marked once.
TRANSLATED_VALUES = {
    "sota/table.html": frozenset(
        {"preset_titles", "preset_help", "option", "about", "number", "title"}
    ),
    "operator/tables.html": frozenset({"preset_titles"}),
    "operator/alerts.html": frozenset({"label"}),
    "operator/player_list.html": frozenset({"title"}),
}


#: What the console's templates show as it is: download formats, and examples of the audit
#: log's own codes (an action prefix, actors, a key placeholder in a command line).
CONSOLE_CODES = frozenset(
    {
        "CSV",
        "JSON Lines",
        "input[placeholder]: money.",
        "input[placeholder]: user:1",
        "input[placeholder]: user:7",
        "string 'HEX'",
    }
)


@pytest.mark.parametrize(
    "template", sorted(path.name for path in (TEMPLATES / "operator").glob("*.html"))
)
def test_every_shown_word_of_a_console_template_is_marked(template: str) -> None:
    """The console is read in the staff's language too, its screen readers' labels included."""
    found = unmarked_template_text(
        (TEMPLATES / "operator" / template).read_text(),
        TRANSLATED_VALUES.get(f"operator/{template}", frozenset()),
    )
    assert [text for text in found if text not in CONSOLE_CODES] == []


def test_the_check_finds_unmarked_text_attributes_and_strings() -> None:
    found = unmarked_template_text(
        '<p title="Your cards">Hello {{ name }}</p>{% trans %}Fine{% endtrans %}'
        '<p>{{ _("Fine too") }} · Casino War</p>{{ "Waiting for you" if x }}<code>AS KH</code>'
    )
    assert found == ["p[title]: Your cards", "Hello", "string 'Waiting for you'"]


def test_the_check_finds_translated_values_the_extraction_cannot_see() -> None:
    found = unmarked_template_text(
        '{% for s in ["pending", "approved"] %}{{ _(s) }}{% endfor %}{{ _("Fine") }}'
        "{{ _(a.status) }}{{ _(label) }}{{ term(status) }}",
        frozenset({"label"}),
    )
    assert found == ["translated value 's'", "translated value 'a'"]


# --- the scripts --------------------------------------------------------------------------------

#: Strings of the scripts that look like prose but are code: selectors, events, storage keys.
CODE_LIKE = re.compile(
    r"""^(
        .*\[[\w\-]+([~|^$*]?=[^\]]*)?\].*          # a selector with an attribute
      | --[\w\-]+                                   # a CSS custom property
      | [\w\-]+(\.[\w\-]+)+                          # dotted names: storage keys
      | [0-9A-Z]+                                   # rank letters
      | [0-9a-f]+                                   # lower-case hex: keys, hashes
      | [a-z]*[.#][\w\-]+([\s>.#:][\w\-.#:\[\]="]*)*  # a class or id selector
      | [a-z][\w\-]*(\s[a-z][\w\-]*)*              # lowercase words: classes, events, keys
      | [a-z_]+:                                    # a key's prefix: round:12
      | [\w.\-/]*\.(json|js|css|pyz|html)          # file names
      | https?://\S+ | /\S*                         # URLs and paths
      | \w+/\w+(\+\w+)?                             # media types
      | [A-Z][A-Za-z]+(Error|Event)?               # one identifier-like word (a name, a type)
      | [A-Z][\w]*(-[A-Z][\w]*)+                    # HTTP headers: Content-Type, X-CSRF-Token
      | \([a-z\-]+:\s?[\w\-]+\)(\sand\s\([a-z\-]+:\s?[\w\-]+\))*  # a media query
    )$""",
    re.X,
)


def _js_strings(path: Path) -> list[tuple[int, str, str]]:
    """Return (line, string, the call it is the argument of) for each string literal."""
    found: list[tuple[int, str, str]] = []
    calls: list[str] = []
    last_name = ""
    with warnings.catch_warnings():
        # Babel calls its tokenizer internal now; it is the one its extractor uses.
        warnings.simplefilter("ignore", DeprecationWarning)
        tokens = list(
            jslexer.tokenize(path.read_text(), jsx=False, dotted=True, template_string=True)
        )
    for token in tokens:
        if token.type == "name":
            last_name = token.value
            continue
        if token.type == "operator" and token.value == "(":
            calls.append(last_name)
        elif token.type == "operator" and token.value == ")" and calls:
            calls.pop()
        elif token.type in ("string", "template_string"):
            text = token.value[1:-1]
            found.append((token.lineno, text, calls[-1] if calls else ""))
        last_name = ""
    return found


def unmarked_script_text(path: Path) -> list[str]:
    """Return the prose literals of a script that are not the message of a gettext call (or
    marked with ``N_``/``Nn_``, to be translated when shown)."""
    unmarked = []
    for line, text, call in _js_strings(path):
        if call.split(".")[-1] in ("gettext", "ngettext", "N_", "Nn_"):
            continue
        if (
            not _prose(text)
            or CODE_LIKE.match(text.strip())
            or "${" in text
            and not _prose(re.sub(r"\$\{[^}]*\}", " ", text))
        ):
            continue
        unmarked.append(f"{path.name}:{line}: {text}")
    return unmarked


#: The browser's Sota engine is the core's twin (tests run it alone, without the page): like the
#: core it knows no language, and verify.js words what it finds for the player.
LANGUAGE_FREE = frozenset({"sota_engine.js"})


@pytest.mark.parametrize(
    "script", sorted(p.name for p in SCRIPTS.glob("*.js") if p.name not in LANGUAGE_FREE)
)
def test_every_prose_string_of_a_script_is_marked(script: str) -> None:
    assert unmarked_script_text(SCRIPTS / script) == []


# --- the services' refusals ---------------------------------------------------------------------

#: Services whose refusals reach the pages and the API in the reader's language; each message is
#: marked with ``N_`` where it is raised, its values given as ``params`` (an f-string has no id).
MARKED_SERVICES = ("player_keys", "transparency", "approvals", "proposals", "alerts")


def unmarked_refusals(source: str) -> list[str]:
    """Return the messages raised as plain or formatted strings rather than ``N_("...")``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)):
            continue
        message = node.exc.args[0] if node.exc.args else None
        if isinstance(message, ast.JoinedStr) or (
            isinstance(message, ast.Constant) and isinstance(message.value, str)
        ):
            found.append(f"line {node.lineno}: {ast.unparse(message)}")
    return found


def test_the_check_finds_unmarked_refusals() -> None:
    source = (
        'raise NotFound(N_("no alert %(id)s"), params={"id": 1})\n'
        'raise NotFound(f"no alert {alert_id}")\n'
        'raise Conflict("taken")\n'
        "raise ValueError\n"
    )
    assert unmarked_refusals(source) == ["line 2: f'no alert {alert_id}'", "line 3: 'taken'"]


@pytest.mark.parametrize("service", MARKED_SERVICES)
def test_every_refusal_of_a_service_is_marked(service: str) -> None:
    source = (PACKAGE / "services" / f"{service}.py").read_text()
    assert unmarked_refusals(source) == []
