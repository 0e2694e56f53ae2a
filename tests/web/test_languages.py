"""The four languages: every catalogue has every message, every page renders in each language,
and the JSON API speaks English unless its client asks otherwise.
"""

from __future__ import annotations

import ast
import html
import re
from collections.abc import Callable
from collections.abc import Iterable
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from functools import cache
from pathlib import Path
from typing import Any
from typing import Final

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po
from flask import Flask
from flask.testing import FlaskClient
from operator_support import add_user
from operator_support import client_as
from operator_support import db
from sqlalchemy import select
from web_support import PASSWORD
from web_support import api_register
from web_support import plant_seed_repeating_a_move
from web_support import plant_server_seed
from web_support import plant_sota_winner
from web_support import post_form
from web_support import refusal_kinds
from web_support import register_page
from web_support import scripts_words

from sota_casino.core import anchors
from sota_casino.core import sota
from sota_casino.db import get_session
from sota_casino.models import Alert
from sota_casino.models import Signup
from sota_casino.services import alerts
from sota_casino.services import money
from sota_casino.services import settings
from sota_casino.web import format
from sota_casino.web import i18n
from sota_casino.web import sota as sota_views
from sota_casino.web.i18n import LANGUAGES

ROOT = Path(__file__).resolve().parents[2]
CATALOGUES = ROOT / "sota_casino" / "translations"
TRANSLATED = sorted(set(LANGUAGES) - {"en"})
HTML_LANG = re.compile(r'<html lang="([a-z]+)">')


@cache
def extracted_messages() -> frozenset[str | tuple[str, ...]]:
    """Every message the sources mark, as ``make translations-extract`` finds them: an id, or
    a plural's (singular, plural)."""
    with open(ROOT / "babel.cfg") as config:
        method_map, options_map = parse_mapping_cfg(config)
    keywords = {**DEFAULT_KEYWORDS, "N_": None, "Nn_": (1, 2)}
    found: set[str | tuple[str, ...]] = set()
    for _file, _line, message, _comments, _context in extract_from_dir(
        str(ROOT), method_map, options_map, keywords=keywords
    ):
        found.add(message if isinstance(message, str) else tuple(message))
    return frozenset(found)


@cache
def marked_messages() -> frozenset[str]:
    """Every message id the sources mark (a plural's by its singular, as catalogues key it)."""
    return frozenset(_strings(message)[0] for message in extracted_messages())


def catalogue_gaps(language: str, message_ids: Iterable[str]) -> list[str]:
    """Return which of ``message_ids`` the language's catalogue lacks, or has empty or fuzzy."""
    path = CATALOGUES / language / "LC_MESSAGES" / "messages.po"
    with open(path, "rb") as source:
        catalogue = read_po(source)
    gaps = []
    for message_id in sorted(message_ids):
        entry = catalogue.get(message_id)
        if entry is None:
            gaps.append(f"missing: {message_id!r}")
            continue
        if entry.fuzzy or not all(_strings(entry.string)):
            gaps.append(f"{'fuzzy' if entry.fuzzy else 'empty'}: {message_id!r}")
    return gaps


def test_the_sources_mark_messages_for_every_part() -> None:
    marked = marked_messages()
    # A template, a script, a web module and a refusal of a service, each found.
    for message in ("Welcome back", "A tie!", "clubs", "wrong username or password"):
        assert message in marked


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_catalogue_has_every_message_translated(language: str) -> None:
    assert catalogue_gaps(language, marked_messages()) == []


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_catalogue_entry_is_a_message_the_extraction_finds(language: str) -> None:
    """``make translations-update`` drops an entry the extraction does not find: one still
    shown (its literal passed to a call the extractor does not know) would turn English."""
    with open(CATALOGUES / language / "LC_MESSAGES" / "messages.po", "rb") as source:
        catalogue = read_po(source)
    unfound = [
        entry.id
        for entry in catalogue
        if entry.id and _strings(entry.id)[0] not in marked_messages()
    ]
    assert unfound == []


# --- the scripts' messages, found without Babel's lexer ----------------------------------------

SCRIPTS = ROOT / "sota_casino" / "static" / "js"
_LITERAL = r"""(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)"""
#: A message argument: literals joined with ``+``, ending the argument (``"a" + b`` is no id).
_MESSAGE = rf"{_LITERAL}(?:\s*\+\s*{_LITERAL})*(?=\s*[,)])"
#: The scripts' tokens that matter, in the order they are tried at each place: comments and
#: literals are skipped whole, so a call written inside one is not taken for a call, and a
#: regular expression (after an operator or ``return``, where no division can stand) is skipped
#: so that a quote in it starts no string. A call is matched up to its message arguments only,
#: so a call nested in its other arguments is found next.
SCRIPT_TOKENS = re.compile(
    rf"""
      //[^\n]* | /\*.*?\*/
    | (?<![\w$])(?P<keyword>gettext|ngettext|N_|Nn_)\s*\(\s*(?P<message>{_MESSAGE})
      (?:\s*,\s*(?P<plural>{_MESSAGE}))?
    | {_LITERAL}
    | (?:(?<=[(,=:\[!&|?{{}};])|(?<=\breturn))\s*/(?![/*])(?:[^/\\\n\[]|\\.|\[(?:[^]\\\n]|\\.)*])+/
    """,
    re.X | re.S,
)
PLURAL_KEYWORDS = frozenset({"ngettext", "Nn_"})
_ESCAPE = re.compile(r"\\(?:u\{([0-9a-fA-F]+)\}|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|(.))", re.S)
_ESCAPED = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0", "\n": ""}


def _text(argument: str) -> str:
    """Return the text a message argument's literals (``"a" + 'b'``) stand for."""
    return "".join(
        _ESCAPE.sub(_unescaped, literal[1:-1]) for literal in re.findall(_LITERAL, argument)
    )


def _unescaped(escape: re.Match[str]) -> str:
    code = escape[1] or escape[2] or escape[3]
    return chr(int(code, 16)) if code else _ESCAPED.get(escape[4], escape[4])


def script_messages(source: str) -> list[tuple[int, str | tuple[str, str]]]:
    """Return (line, message) for each ``gettext``/``ngettext``/``N_``/``Nn_`` call of a script
    whose message is written as literals: an id, or a plural's (singular, plural).

    Limits: a call inside a template literal's ``${...}`` is not seen (the literal is skipped
    whole), nor a message held in a variable (no extractor can see one). A regular expression
    after ``)`` or ``]`` would be read as a division; the scripts write none there.
    """
    found: list[tuple[int, str | tuple[str, str]]] = []
    for token in SCRIPT_TOKENS.finditer(source):
        if not token["keyword"]:
            continue
        line = source.count("\n", 0, token.start()) + 1
        message = _text(token["message"])
        if token["keyword"] not in PLURAL_KEYWORDS:
            found.append((line, message))
        elif token["plural"]:
            found.append((line, (message, _text(token["plural"]))))
    return found


def test_the_scripts_scan_finds_nested_and_plural_calls_and_skips_comments_and_literals() -> None:
    source = (
        '/* gettext("in a comment") */ say(gettext("Hello %(who)s", { who: gettext("you") }));\n'
        "const n = ngettext('%(num)s chip', \"%(num)s \\u2014 chips\", count) / 2;\n"
        "// gettext('in a line comment')\n"
        'const odd = /"/.test(s) ? N_("a " + "b", { why: Nn_("one", "many", 2) })\n'
        ': "gettext(\\"no\\")";\n'
        'window.SotaI18n.gettext(`tick`); gettext(name); gettext("half" + rest);\n'
    )
    assert script_messages(source) == [
        (1, "Hello %(who)s"),
        (1, "you"),
        (2, ("%(num)s chip", "%(num)s \u2014 chips")),
        (4, "a b"),
        (4, ("one", "many")),
        (6, "tick"),
    ]


def scripts_messages_by_place() -> dict[str | tuple[str, str], list[str]]:
    """Return each message the scripts mark, with where (``file:line``) they mark it."""
    places: dict[str | tuple[str, str], list[str]] = {}
    for path in sorted(SCRIPTS.glob("*.js")):
        for line, message in script_messages(path.read_text(encoding="utf-8")):
            places.setdefault(message, []).append(f"{path.name}:{line}")
    return places


def test_the_extraction_finds_every_message_the_scripts_mark() -> None:
    """What the extraction misses never reaches a catalogue (an update drops it as obsolete),
    so the pages show it in English whatever their language."""
    missed = {
        f"{', '.join(places)}: {message!r}"
        for message, places in scripts_messages_by_place().items()
        if message not in extracted_messages()
    }
    assert sorted(missed) == []


#: The Python code's marking calls, with how many of their first arguments are the message;
#: and the web layer's own translating calls, which the extraction does not know, so a literal
#: message given to one must be marked with ``N_`` there.
PYTHON_KEYWORDS: Final = {
    **{"gettext": 1, "_": 1, "N_": 1, "lazy_gettext": 1, "ngettext": 2, "Nn_": 2},
    **{"gettext_counting": 1, "flash_words": 1},
}


def python_messages(source: str) -> list[tuple[int, str | tuple[str, ...]]]:
    """Return (line, message) for each marking call of a module whose message is written as
    literals, however deep it is nested in other calls (Babel's extractor reads one level)."""
    found: list[tuple[int, str | tuple[str, ...]]] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        called = node.func
        name = getattr(called, "id", None) or getattr(called, "attr", None)
        count = PYTHON_KEYWORDS.get(name or "", 0)
        texts = [a.value for a in node.args[:count] if isinstance(a, ast.Constant)]
        if count and len(texts) == count and all(isinstance(t, str) for t in texts):
            found.append((node.lineno, texts[0] if count == 1 else tuple(texts)))
    return found


def test_the_python_scan_finds_calls_nested_at_any_depth() -> None:
    source = (
        'raise Refused(N_("outer %(a)s"), params={"a": gettext("one", b=f(ngettext("x", "xs", n'
        ")))})\nself.gettext(name)\n"
    )
    found = python_messages(source)
    assert sorted(found, key=str) == [(1, "one"), (1, "outer %(a)s"), (1, ("x", "xs"))]


def test_the_extraction_finds_every_message_the_python_code_marks() -> None:
    missed = [
        f"{path.relative_to(ROOT)}:{line}: {message!r}"
        for path in sorted((ROOT / "sota_casino").rglob("*.py"))
        for line, message in python_messages(path.read_text(encoding="utf-8"))
        if message not in extracted_messages()
    ]
    assert missed == []


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_message_the_scripts_mark_is_translated(language: str) -> None:
    message_ids = {_strings(message)[0] for message in scripts_messages_by_place()}
    assert catalogue_gaps(language, message_ids) == []


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_compiled_catalogue_is_the_po_file(language: str) -> None:
    """The app serves the .mo files: ``make translations`` must have compiled the .po as is."""
    folder = CATALOGUES / language / "LC_MESSAGES"
    with open(folder / "messages.po", "rb") as po, open(folder / "messages.mo", "rb") as mo:
        source, compiled = read_po(po), read_mo(mo)
    translated = [m for m in source if m.id and not m.fuzzy and all(_strings(m.string))]
    wanted = {_key(m.id): _key(m.string) for m in translated}
    served = {_key(m.id): _key(m.string) for m in compiled if m.id}
    assert {k: v for k, v in wanted.items() if served.get(k) != v} == {}


#: Finnish names a Sota trick "kierros", as the Finnish rule text does, and the casino's round
#: (a Casino War hand or a whole Sota game, bet and settled) "pelikierros".
FINNISH_TRICK = re.compile(r"(?<![^\W\d_])kierro", re.I)
FINNISH_ROUND = re.compile(r"pelikierro", re.I)


def test_finnish_keeps_the_casinos_round_apart_from_a_sota_trick() -> None:
    catalogue = _catalogue("fi")
    mixed = []
    for message in catalogue:
        english = " ".join(_strings(message.id)) if message.id else ""
        # A soft hyphen marks where a long word may break in a narrow column: no part of it.
        finnish = " ".join(_strings(message.string)).replace("\u00ad", "")
        rounds = re.search(r"\brounds?\b", english, re.I)
        tricks = re.search(r"\btricks?\b", english, re.I)
        if rounds and not tricks and FINNISH_TRICK.search(finnish):
            mixed.append(english)  # a round called a trick
        elif tricks and not rounds and FINNISH_ROUND.search(finnish):
            mixed.append(english)  # a trick called a round
    assert mixed == []


#: One word for each concept in each language, the rule texts' where they name it: (language,
#: the English that names the concept, what the translation must not say instead, the word).
ONE_WORD: Final = (
    ("fi", r"\boperators?\b", r"operaattor", "ylläpitäjä"),
    ("fi", r"\bentr(?:y|ies)\b", r"kirjau(?!t)", "merkintä"),  # kirjautua is logging in
    ("fi", r"\bbets?\b", r"\b(?:veto|vedo|lyö|löi)", "panos"),  # lyödä vetoa is sports betting
    ("fi", r"\bverifier\b", r"varmisti?m", "tarkistin"),
    ("fi", r"fairness page", r"reiluussivu", "Reiluus-sivu"),
    # The Finnish rule text: "tasatilanteessa pelaaja joko luovuttaa puolet panoksestaan".
    # Any form of tasapeli: its plural stem is tasapele- ("ei vielä tasapelejä").
    ("fi", r"\bt(?:ie|ied|ies)\b", r"tasa\u00ad?pel[ei]", "tasatilanne (tasapeli is a drawn game)"),
    ("fi", r"\bsurrender", r"antau|antaud", "luovuttaa"),
    ("fi", r"\bsettl", r"päätty|tility", "ratketa, ratkaista"),
    ("fi", r"\bverif(?:y|ied|ies)\b", r"varmen|varmist", "tarkistaa"),
    # The verifier's replay recomputes the same game; uusinta is a rerun or a rematch.
    ("fi", r"\breplay", r"\buusin(?:ta|na|no)", "toisto, toistaa"),
    # A number a row is known by; tunnus is also what one signs in with ("tunnukset").
    ("fi", r"\b[Ii]ds?\b", r"\btunnu[sk]", "tunniste"),
    ("nb", r"\bverifier\b", r"verifikator|kontrollskript", "kontrollprogrammet"),
    ("nb", r"\bt(?:ie|ied|ies)\b", r"uavgjort|likt-situasjon", "likt (uavgjort is a drawn game)"),
    ("nb", r"#%\(", r"#%\(", "nr."),
    ("nb", r"\btie bets?\b", r"likt-innsats", "innsats på like kort"),
    ("nb", r"\bsettl", r"\bavgjort", "gjøre opp (avgjort is decided)"),
    ("nb", r"\bverif(?:y|ied|ies)\b", r"verifiser", "kontrollere"),
    ("nb", r"\bdecisions?\b", r"avgjørels|beslutning", "valg"),
    # The Norwegian rule text lays cards "med baksiden opp" (or "skjult"), as the pages do.
    ("nb", r"\bface[- ]?down\b", r"bildesiden", "med baksiden opp, skjult"),
    ("pt", r"", r"\b(?:checkpoints?|replay|log)\b", "ponto de controle, reprodução, registro"),
    ("pt", r"", r"(?<!Sota )(?<![\w-])casino\b(?! War)", "cassino (Brazilian, as everywhere)"),
    ("pt", r"", r"\bronda\b|n\.º", "rodada, nº (Brazilian, as everywhere)"),
    ("pt", r"#%\(", r"#%\(", "nº"),
    ("pt", r"\bsettl", r"encerr", "liquidar"),
    ("pt", r"\bcommit", r"comprometid", "compromisso (comprometido reads as compromised)"),
    ("pt", r"^Played$", r"\bjogada\b", "data e hora (jogada is a move)"),
    ("pt", r"\broles?\b", r"função", "papel"),
    # The records a browser keeps against the casino's log: registro is the log itself.
    (
        "pt",
        r"\b(?:[Yy]our|[Mm]y|keeps no|holds) records\b|\bno record\b|^Records of\b",
        r"\bregistros\b|\b(?:sem|tem) registro\b",
        "cópias",
    ),
)


@pytest.mark.parametrize("language", TRANSLATED)
def test_each_language_names_a_concept_with_one_word(language: str) -> None:
    catalogue = _catalogue(language)
    stray = []
    for message in catalogue:
        if not message.id:
            continue
        english = " ".join(_strings(message.id))
        translated = " ".join(_strings(message.string))
        # Code and placeholders are not prose (a placeholder after "#" is kept for its "#").
        prose = re.sub(r"<code[^>]*>.*?</code>|(?<!#)%\(\w+\)s", " ", translated)
        for rule_language, names, instead, word in ONE_WORD:
            if rule_language != language or not re.search(names, english):
                continue
            if re.search(instead, prose, re.I):
                stray.append(f"{word}: {translated}")
    assert stray == []


#: The players' words for the games' things, as the rule texts name them (seeds/): every
#: message that speaks of one says it with this word (a stem, for the inflected languages).
GLOSSARY: Final = {
    "fi": {
        "dealer": "jaka",  # jakaja, jakajan, jakajaa, jakajalle
        "decks?": "pak",  # pakka, pakan, pakat, pakkaa
        "surrender\\w*": "luovu",
        "wars?": "so[dt]",  # sota, sodan, sotaan, sodat
        "t(?:ie|ied|ies)": "tasa",
        "stakes?": "pano[ks]",
        "tricks?": "kierro",
        "seats?": "paik",
        "sweets?": "kark",
        "chips?": "pelimerk",
        "shoe": "ken[kg]",
        "pots?": "pot",
    },
    "nb": {
        "dealer": "dealer",
        "decks?": "kortstokk",
        "surrender\\w*": "opp",  # gi opp, ga opp, oppgivelser
        "wars?": "krig",
        "t(?:ie|ied|ies)": "lik",
        "stakes?": "sats",  # innsats, satse
        "tricks?": "stikk",
        "seats?": "plass",
        "sweets?": "godteri",
        "chips?": "sjetong",
        "shoe": "sko",
        "pots?": "pott",
    },
    "pt": {
        "dealer": "crupi",
        "decks?": "baralho",
        "surrender\\w*": "desist",
        "wars?": "guerra",
        "t(?:ie|ied|ies)": "empat",
        "stakes?": "apost",
        "tricks?": "vaza",
        "seats?": "lugar",
        "sweets?": "bala",
        "chips?": "ficha",
        "shoe": "sapato",
        "pots?": "pilh",  # the Portuguese text's "pilha de batalha"
    },
}
#: English that uses a glossary word in another sense, or a game's name kept as it is.
NOT_THE_TERM = re.compile(r"Casino War|Take a seat|ties them", re.I)


@pytest.mark.parametrize("language", TRANSLATED)
def test_each_language_says_the_games_things_with_the_players_words(language: str) -> None:
    catalogue = _catalogue(language)
    missing = []
    for message in catalogue:
        if not message.id:
            continue
        english = NOT_THE_TERM.sub(" ", " ".join(_strings(message.id)))
        english = re.sub(r"<code[^>]*>.*?</code>|%\(\w+\)s|\{\w+\}", " ", english)
        translated = " ".join(_strings(message.string))
        for term, word in GLOSSARY[language].items():
            if re.search(rf"\b{term}\b", english, re.I) and not re.search(word, translated, re.I):
                missing.append(f"{term} ({word}): {translated}")
    assert missing == []


@pytest.mark.parametrize("language", TRANSLATED)
def test_each_catalogue_writes_two_plural_forms(language: str) -> None:
    # Bokmål, Brazilian Portuguese and Finnish have a singular and a plural: a third form (CLDR's
    # "many", for round millions) would be "1000000 de fichas" on a page that writes digits.
    catalogue = _catalogue(language)
    assert catalogue.num_plurals == 2
    assert [m.id for m in catalogue if m.pluralizable and len(m.string) != 2] == []


#: An amount (number and unit) in Finnish cannot stand before the noun it measures, which then
#: takes a case the amount cannot follow ("tähän 5 pelimerkkiä panokseen"): it comes after it.
#: Any amount placeholder counts (``example_stake`` as much as ``stake``), and any case of the
#: noun ("10 karkkia panoksella" is as wrong).
FINNISH_AMOUNT_BEFORE_ITS_NOUN = re.compile(
    r"%\(\w*(?:needed|stake|raise|debit|ante|payout)\)s(?:</strong>)? "
    r"(?:panok|panos|korotu|veloitu)"
)


def test_finnish_never_puts_an_amount_before_the_noun_it_measures() -> None:
    catalogue = _catalogue("fi")
    wrong = [
        finnish
        for message in catalogue
        if message.id
        for finnish in _strings(message.string)
        if FINNISH_AMOUNT_BEFORE_ITS_NOUN.search(finnish)
    ]
    assert wrong == []


#: A Finnish verb that takes a whole object, then the words that may stand between it and the
#: object: "voitti 1 pelimerkki" is wrong (the object of one is "1 pelimerkin", of more "5
#: pelimerkkiä"), so an amount written with its unit (which the code gives in the nominative,
#: "1 pelimerkki") is never that object: it is said as what something is ("voitto on 1 pelimerkki").
FINNISH_AMOUNT_AS_OBJECT = re.compile(
    r"\b(?:voit(?:i|ti|it|at|taa)|panost(?:i|it|at|aa)|veloit(?:ti|it|at|taa)|antoi(?:vat)?"
    r"|ylitt(?:i|ävät|ää)|sa(?:i|it|at|a))\s+"
    r"(?:(?:yli|yhteensä|takaisin|vielä|tunnin|aikana|\w+(?:ll[aä]|lle)|%\(\w+\)s)\s+)*"
    r"(?:<strong>)?%\((?:net|won|tie_bets|debit|house|player|threshold|payout)\)s",
    re.I,
)


def test_finnish_never_makes_an_amount_the_object_of_a_verb() -> None:
    catalogue = _catalogue("fi")
    wrong = [
        finnish
        for message in catalogue
        if message.id
        for finnish in _strings(message.string)
        if FINNISH_AMOUNT_AS_OBJECT.search(finnish)
    ]
    assert wrong == []


#: The quotation marks each language sets around a quoted name: Finnish ”…”, Bokmål «…»,
#: Brazilian Portuguese “…” (typewriter quotes belong to code, which is set apart as code).
QUOTES: Final = {"fi": ("\u201d", "\u201d"), "nb": ("\u00ab", "\u00bb"), "pt": ("\u201c", "\u201d")}
#: A placeholder or a character or two, quoted with any quotation marks.
QUOTED = re.compile(
    r"""(["'\u201c\u201d\u00ab\u00bb\u2018\u2019\u201e])(?:%\(\w+\)s|[^\s"']{1,2})(["'\u201c\u201d\u00ab\u00bb\u2018\u2019])"""
)


@pytest.mark.parametrize("language", TRANSLATED)
def test_a_quoted_name_takes_the_languages_quotation_marks(language: str) -> None:
    catalogue = _catalogue(language)
    wrong = []
    for message in catalogue:
        for text in _strings(message.string) if message.id else ():
            # Code and markup (attribute values are quoted) are not prose.
            prose = re.sub(r"<code[^>]*>.*?</code>|<[^>]*>", " ", text)
            quoted = [(q[1], q[2]) for q in QUOTED.finditer(prose)]
            if any(marks != QUOTES[language] for marks in quoted):
                wrong.append(text)
    assert wrong == []


#: How each language writes the plural of the units a count is given in (the plural form of a
#: message that counts antes must say "anter" in Bokmål, as "1,03 anter" reads). Finnish takes
#: the partitive after a number only where the number stands as subject or object ("6 pakalla"
#: is right): its decks are left out.
UNIT_PLURALS: Final = {
    "fi": {"chips": "pelimerkkiä", "sweets": "karkkia", "antes": "panosta"},
    "nb": {"chips": "sjetonger", "sweets": "godterier", "antes": "anter", "decks": "kortstokker"},
    "pt": {"chips": "fichas", "sweets": "balas", "antes": "apostas iniciais", "decks": "baralhos"},
}


@pytest.mark.parametrize("language", TRANSLATED)
def test_a_counted_units_plural_form_writes_the_unit_in_the_plural(language: str) -> None:
    catalogue = _catalogue(language)
    wrong = []
    for message in catalogue:
        if not message.pluralizable:
            continue
        english, translated = message.id[1], message.string[1]
        for unit in re.findall(r"%\(\w+\)s(?:</strong>)? (\w+)", english):
            plural = UNIT_PLURALS[language].get(unit)
            if plural is not None and plural not in translated:
                wrong.append(f"{unit}: {translated}")
    assert wrong == []


@pytest.mark.parametrize("language", TRANSLATED)
def test_a_rule_sets_help_does_not_open_by_repeating_its_name(language: str) -> None:
    """The Sota page shows a rule set's name above its help: "Rauha" over "Rauha: ..." (the
    English help says "Peace", which in Finnish is the name itself) reads as a stutter."""
    catalogue = _catalogue(language)
    stutters = []
    for preset, title in sota_views.PRESET_TITLES.items():
        name = catalogue[title].string
        help_text = catalogue[sota_views.PRESET_HELP[preset]].string
        if help_text.casefold().startswith(name.casefold()):
            stutters.append(f"{name}: {help_text}")
    assert stutters == []


def _catalogue(language: str) -> Catalog:
    with open(CATALOGUES / language / "LC_MESSAGES" / "messages.po", "rb") as po:
        return read_po(po)


def _key(value: str | tuple[str, ...] | list[str]) -> str | tuple[str, ...]:
    return value if isinstance(value, str) else tuple(value)


def _strings(value: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


# --- every page in each language ------------------------------------------------------------


def lang_of(client: FlaskClient, path: str) -> tuple[int, str]:
    answer = client.get(path)
    found = HTML_LANG.search(answer.get_data(as_text=True))
    return answer.status_code, found.group(1) if found else ""


PUBLIC_PAGES = ("/", "/auth/login", "/auth/register", "/rules/casino-war", "/rules/sota")
PLAYER_PAGES = (
    "/lobby",
    "/casino-war",
    "/casino-war/odds",
    "/sota",
    "/history",
    "/stats",
    "/fairness",
    "/auth/password",
)
OPERATOR_PAGES = ("/operator/audit", "/operator/ledger", "/operator/players", "/operator/tables")


def _play_a_little(client: FlaskClient) -> list[str]:
    """Play a Casino War round and a Sota game; return the round pages they made."""
    war = post_form(client, "/casino-war/rounds", {"bet": "5"})
    sota = post_form(client, "/sota/games", {"preset": "nordic", "stake": "5", "seats": "2"})
    pages = [war.headers["Location"], sota.headers["Location"]]
    history = client.get("/history").get_data(as_text=True)
    pages += sorted(set(re.findall(r'href="(/history/\d+)"', history)))
    return pages


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_every_page_renders_in_each_language(
    app: Flask, client: FlaskClient, language: str
) -> None:
    client.set_cookie("lang", language)
    for path in PUBLIC_PAGES:
        assert lang_of(client, path) == (200, language), path
    register_page(client, "aino")
    post_form(client, "/language", {"locale": language, "next": "/lobby"})
    for path in PLAYER_PAGES:
        assert lang_of(client, path) == (200, language), path
    for path in _play_a_little(client):  # a tie, a game, their round pages
        assert lang_of(client, path) == (200, language), path
    assert lang_of(client, "/no-such-page") == (404, language)


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_sota_rounds_page_names_the_round_and_its_tricks_with_different_words(
    client: FlaskClient, language: str
) -> None:
    register_page(client, "aino")
    post_form(client, "/language", {"locale": language, "next": "/lobby"})
    game = post_form(client, "/sota/games", {"preset": "nordic", "stake": "5", "seats": "2"})
    round_id = game.headers["Location"].rsplit("/", 1)[1]
    page = html.unescape(client.get(f"/history/{round_id}").get_data(as_text=True))
    title = re.search(r"<h1>(.*?)</h1>", page)
    tricks = re.search(r"<dt>([^<]*)</dt><dd>\d+ \(", page)  # "Tricks: 294 (16 wars)"
    assert title and tricks, page
    # "Sota game #236" (en), "Sota-peli #236" (fi), "Sota-spill nr. 236" (nb).
    round_word = [w for w in re.findall(r"[^\W\d_]{3,}", title.group(1)) if w != "Sota"][0]
    # Told apart by their stems: a word and its plural share the first letters.
    assert round_word[:5].lower() != tricks.group(1)[:5].lower(), (round_word, tricks.group(1))


#: A seat's win in each language, as a whole sentence: composed from the seat's label ("%(name)s
#: wins"), Norwegian read "Dealer vinner" and Portuguese "Crupiê vence", without the article.
SEAT_WINS = {
    ("dealer", "en"): "Dealer wins",
    ("dealer", "fi"): "Jakaja voitti",
    ("dealer", "nb"): "Dealeren vinner",
    ("dealer", "pt"): "O crupiê vence",
    ("CPU 1", "en"): "CPU 1 wins",
    ("CPU 1", "fi"): "Kone 1 voitti",
    ("CPU 1", "nb"): "CPU 1 vinner",
    ("CPU 1", "pt"): "A CPU 1 vence",
}
#: The seat and the seats of a game each of them wins.
WINNING_SEATS = {"dealer": (1, 2), "CPU 1": (2, 4)}


@pytest.mark.parametrize(("seat", "language"), sorted(SEAT_WINS))
def test_a_sota_game_another_seat_wins_says_so_in_a_whole_sentence(
    app: Flask, client: FlaskClient, seat: str, language: str
) -> None:
    """The game's result, and the same sentence given to its script (and the fairness page's)."""
    winner, seats = WINNING_SEATS[seat]
    register_page(client, "aino")
    post_form(client, "/language", {"locale": language, "next": "/lobby"})
    plant_sota_winner(app, "aino", sota.SotaRules.from_dict({"seats": seats}), winner)
    game = post_form(client, "/sota/games", {"preset": "nordic", "stake": "5", "seats": str(seats)})
    page = client.get(game.headers["Location"]).get_data(as_text=True)
    headline = re.search(r'<div class="headline">([^<]*)</div>', page)
    assert headline and html.unescape(headline.group(1)) == SEAT_WINS[seat, language], page
    scripts = scripts_words(client, page)["sota_winners"]
    assert scripts[str(winner)] == SEAT_WINS[seat, language]


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_sota_game_is_titled_alike_on_its_page_and_on_its_receipt(
    client: FlaskClient, language: str
) -> None:
    """A game was "Sota game #N" on its page but "Sota round #N" on its receipt (and "Round #N"
    in the receipt's window title): one name on both, the page's, titles and headings."""
    register_page(client, "aino")
    post_form(client, "/language", {"locale": language, "next": "/lobby"})
    game = post_form(client, "/sota/games", {"preset": "nordic", "stake": "5", "seats": "2"})
    round_id = game.headers["Location"].rsplit("/", 1)[1]
    titles = []
    for path in (f"/sota/games/{round_id}", f"/history/{round_id}"):
        page = html.unescape(client.get(path).get_data(as_text=True))
        heading = re.search(r"<h1[^>]*>(.*?)</h1>", page)
        title = re.search(r"<title>(.*?) · Sota Casino</title>", page)
        assert heading and title, page
        titles += [heading.group(1), title.group(1)]
    assert len(set(titles)) == 1 and round_id in titles[0], titles


#: The Sota rules' payout table's headings: its outcomes as nouns, in one voice. They were the
#: result banner's words, which Finnish says in the past ("Voitit", you won) beside "Häviät"
#: (you lose).
PAYOUT_HEADINGS = {
    "en": ["Seats", "Win", "Draw", "Loss"],
    "fi": ["Paikat", "Voitto", "Tasapeli", "Häviö"],
    "nb": ["Plasser", "Seier", "Uavgjort", "Tap"],
    "pt": ["Lugares", "Vitória", "Empate", "Derrota"],
}


@pytest.mark.parametrize("language", sorted(PAYOUT_HEADINGS))
def test_the_sota_payout_table_names_its_outcomes_in_one_voice(
    client: FlaskClient, language: str
) -> None:
    client.set_cookie("lang", language)
    page = client.get("/rules/sota").get_data(as_text=True)
    table = page.split("payouts-table")[1].split("</thead>")[0]
    headings = [html.unescape(h) for h in re.findall(r"<th[^>]*>([^<]*)</th>", table)]
    assert headings == PAYOUT_HEADINGS[language]


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_every_console_page_renders_in_each_language(app: Flask, language: str) -> None:
    operator = client_as(app, add_user(app, "olli", role="operator"))
    operator.set_cookie("lang", language)
    player_id = add_user(app, "pekka")
    for path in (*OPERATOR_PAGES, f"/operator/players/{player_id}"):
        assert lang_of(operator, path) == (200, language), path


# --- the JSON API ---------------------------------------------------------------------------


def test_the_api_message_follows_accept_language_only(client: FlaskClient) -> None:
    api_register(client, "bea")
    wrong = {"username": "bea", "password": PASSWORD + "!"}
    english = client.post("/api/v1/auth/token", json=wrong).get_json()["error"]
    client.set_cookie("lang", "fi")  # a page's choice does not change the API
    still = client.post("/api/v1/auth/token", json=wrong).get_json()["error"]
    finnish = client.post(
        "/api/v1/auth/token", json=wrong, headers={"Accept-Language": "fi-FI"}
    ).get_json()["error"]
    assert english == still == {"code": "unauthorized", "message": "wrong username or password"}
    assert finnish == {"code": "unauthorized", "message": "väärä käyttäjänimi tai salasana"}


def test_every_refusals_default_message_is_marked() -> None:
    """A refusal raised without a message says its docstring, which must be in the catalogues."""
    defaults = {(kind.__doc__ or "").strip() for kind in refusal_kinds()}
    assert defaults - marked_messages() == set()


# --- refusals in the player's words -------------------------------------------------------------

FLASHED_ERROR = re.compile(r'<p class="flash error" role="status"[^>]*>(.*?)</p>', re.S)


def refusal_shown(client: FlaskClient, answer: Any) -> str:
    """Return the refusal a refused form flashed, as the page it went back to shows it."""
    assert answer.status_code == 303
    page = client.get(answer.headers["Location"], follow_redirects=True).get_data(as_text=True)
    found = FLASHED_ERROR.findall(page)
    assert len(found) == 1, found
    return html.unescape(found[0])


def redirected_id(answer: Any) -> int:
    """The id of the round or game a form's answer sends the browser on to."""
    return int(answer.headers["Location"].rsplit("/", 1)[1])


SOTA_RULE_REFUSALS = {
    "fi": {
        "rule_teams": "Joukkuesota vaatii 4 paikkaa (sinä ja Kone 1 jakajaa ja Konetta 2 vastaan)",
        "rule_max_tricks": "Kierrosraja: arvon on oltava kokonaisluku välillä 1–\u206010000 "
        "(annettu 0)",
        "rule_lead": "Voittava johto: arvon on oltava tyhjä (pois käytöstä) tai kokonaisluku "
        "välillä 1–\u206054 (annettu 99)",
    },
    "nb": {
        "rule_teams": "«Lag» krever 4 plasser (du og CPU 1 mot dealeren og CPU 2)",
        "rule_max_tricks": "«Grense for antall stikk» må være et helt tall fra 1 til 10000 "
        "(fikk 0)",
        "rule_lead": "«Vinnende forsprang» må være av (tom) eller et helt tall fra 1 til 54 "
        "(fikk 99)",
    },
    "pt": {
        "rule_teams": "“Equipes” exige 4 lugares (você e a CPU 1 contra o crupiê e a CPU 2)",
        "rule_max_tricks": "“Limite de vazas” precisa ser um número inteiro de 1 a 10000 "
        "(recebido: 0)",
        "rule_lead": "“Vantagem para vencer” precisa ser vazio (desligado) ou um número inteiro "
        "de 1 a 54 (recebido: 99)",
    },
}


@pytest.mark.parametrize("language", TRANSLATED)
def test_a_refused_sota_rule_option_reads_whole_in_the_players_language(
    client: FlaskClient, language: str
) -> None:
    """The option's name and the sentence about it are both translated (the sentence was the
    engine's English after the translated name). Teams name the players of each side, as the
    option does: they were "seats 0+2 against 1+3", numbers from nought no page shows."""
    register_page(client, "aino")
    post_form(client, "/language", {"locale": language, "next": "/sota"})
    values = {"rule_teams": "on", "rule_max_tricks": "0", "rule_lead": "99"}
    for field, expected in SOTA_RULE_REFUSALS[language].items():
        form = {"stake": "5", "preset": "custom", "seats": "2", field: values[field]}
        assert refusal_shown(client, post_form(client, "/sota/games", form)) == expected
    klondike = {"stake": "5", "preset": "klondike", "seats": "2"}
    offered = refusal_shown(client, post_form(client, "/sota/games", klondike))
    assert "must be" not in offered and "nordic" not in offered, offered


ERROR_PAGE_MESSAGE = re.compile(r'<p class="lead">(.*?)</p>', re.S)
#: A refusal shown beside the console form shown again (what was typed kept).
FORM_REFUSAL = re.compile(r'<p class="flash error" role="alert"[^>]*>(.*?)</p>', re.S)


def console_refusal(answer: Any) -> str:
    """Return the refusal of a console form, as its error page or the form shown again says it
    (with a 4xx status)."""
    assert answer.status_code == 422
    text = answer.get_data(as_text=True)
    found = FORM_REFUSAL.search(text) or ERROR_PAGE_MESSAGE.search(text)
    assert found
    return html.unescape(found.group(1))


TABLE_REFUSALS = {
    "fi": (
        "Tasatilanteen voitonmaksu: arvon on oltava kokonaisluku välillä 0–\u206030",
        "Pienin panos ja suurin panos: molempien on oltava kokonaisia pelimerkkejä, eikä "
        "ensimmäinen saa olla jälkimmäistä suurempi",
        "Pienin panos ei saa olla suurempi kuin suurin panos",
    ),
    "nb": (
        "«Utbetaling ved likt» må være et helt tall fra 0 til 30",
        "«Minste innsats» og «største innsats» må være hele sjetonger, og «minste innsats» kan "
        "ikke være større enn «største innsats»",
        "«Minste innsats» kan ikke være større enn «største innsats»",
    ),
    "pt": (
        "“Pagamento do empate” precisa ser um número inteiro de 0 a 30",
        "“Aposta mínima” e “aposta máxima” precisam ser fichas inteiras, e “aposta mínima” não "
        "pode ser maior que “aposta máxima”",
        "“Aposta mínima” não pode ser maior que “aposta máxima”",
    ),
}


def operator_speaking(app: Flask, language: str, page: str) -> FlaskClient:
    """An operator logged in, who picked ``language`` on the console's ``page``."""
    operator = client_as(app, add_user(app, "olli", role="operator"))
    post_form(operator, "/language", {"locale": language, "next": page})
    return operator


@pytest.mark.parametrize("language", TRANSLATED)
def test_a_refused_table_setting_reads_whole_in_the_operators_language(
    app: Flask, language: str
) -> None:
    operator = operator_speaking(app, language, "/operator/tables")
    war = {"min_bet": "5", "max_bet": "50", "decks": "6", "burn": "3", "bonus": "none"}
    payout, war_limits, sota_limits = TABLE_REFUSALS[language]
    answer = post_form(operator, "/operator/tables/casino_war", {**war, "tie_payout": "31"})
    assert console_refusal(answer) == payout
    upside_down = {**war, "tie_payout": "10", "min_bet": "60"}
    answer = post_form(operator, "/operator/tables/casino_war", upside_down)
    assert console_refusal(answer) == war_limits
    sota = {"min_stake": "20", "max_stake": "10", "presets": "nordic"}
    answer = post_form(operator, "/operator/tables/sota", sota)
    assert console_refusal(answer) == sota_limits


#: A password too short refused in each language: the lengths allowed, in Finnish a range whose
#: end a word joiner keeps after its dash ("10–" ended a 320 px phone's line, "128" the next's).
SHORT_PASSWORD = {
    "en": "password must be 10 to 128 characters",
    "fi": "salasanassa on oltava 10–\u2060128 merkkiä",
    "nb": "passordet må være 10 til 128 tegn",
    "pt": "a senha precisa ter de 10 a 128 caracteres",
}


@pytest.mark.parametrize("language", sorted(SHORT_PASSWORD))
def test_a_refusals_range_is_kept_on_one_line(client: FlaskClient, language: str) -> None:
    client.set_cookie("lang", language)
    form = {"username": "frank", "password": "short", "confirm": "short"}
    refused = html.unescape(post_form(client, "/auth/register", form).get_data(as_text=True))
    assert SHORT_PASSWORD[language] in refused.lower()


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_every_range_a_message_writes_is_kept_on_one_line(language: str) -> None:
    """Each message that writes a range tight ("%(low)s–%(high)s", "1–%(max)s", "A–Z"), in
    each language (English: the ids), is served with a word joiner after the dash."""
    tight = re.compile(r"\S–\S")
    loose = re.compile(r"\S–(?!\u2060)\S")
    books = i18n.catalogue(language)
    found = 0
    for message in _catalogue("fi" if language == "en" else language):
        written = _strings(message.id if language == "en" else message.string)
        if not message.id or not any(tight.search(text) for text in written):
            continue
        found += 1
        if isinstance(message.id, tuple):
            served = [books.ngettext(message.id[0], message.id[1], n) for n in (1, 2, 5)]
        else:
            served = [books.gettext(message.id)]
        assert not [text for text in served if loose.search(text)], message.id
    assert found


SIGN_UP_WAITS = {
    "en": ("try again in 60\u00a0minutes", "try again in 1\u00a0minute"),
    "fi": ("yritä uudelleen 60\u00a0minuutin kuluttua", "yritä uudelleen 1\u00a0minuutin kuluttua"),
    "nb": ("prøv igjen om 60\u00a0minutter", "prøv igjen om 1\u00a0minutt"),
    "pt": ("tente de novo em 60\u00a0minutos", "tente de novo em 1\u00a0minuto"),
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_the_sign_up_wait_says_its_minutes_in_each_language(
    make_app: Callable[..., Flask], language: str
) -> None:
    """The per-address sign-up limit says how long to wait, in the reader's words and plural."""
    app = make_app(SIGNUPS_PER_ADDRESS=1)
    register_page(app.test_client(), "erin")
    browser = app.test_client()
    browser.set_cookie("lang", language)
    form = {"username": "frank", "password": PASSWORD, "confirm": PASSWORD}
    refused = post_form(browser, "/auth/register", form)
    assert refused.status_code == 429 and "Retry-After" in refused.headers
    hour, minute = SIGN_UP_WAITS[language]
    assert hour in html.unescape(refused.get_data(as_text=True))
    with app.app_context():
        session = get_session()
        for signup in session.scalars(select(Signup)):
            signup.at -= timedelta(minutes=59, seconds=30)
        session.commit()
    answer = browser.post(
        "/api/v1/auth/register",
        json={"username": "frank", "password": PASSWORD},
        headers={"Accept-Language": language},
    )
    assert answer.status_code == 429
    assert minute in answer.get_json()["error"]["message"]


#: What the sign-up page says a name may hold, and what it says when refusing a name with a
#: letter outside A–Z: each must say that such letters are refused, not just "letters".
NAME_RULES = {
    "en": (
        "3 to 32 characters: the letters A–\u2060Z without accents, digits, and _ . -",
        "username must be 3 to 32 characters: the letters A–\u2060Z without accents, "
        "digits, '.', '_'"
        " or '-'",
    ),
    "fi": (
        "3–\u206032 merkkiä: kirjaimet A–\u2060Z ilman tarkkeita (ei å, ä, ö), numerot sekä _ . -",
        "käyttäjänimessä on oltava 3–\u206032 merkkiä, ja siinä saa olla vain kirjaimia "
        "A–\u2060Z ilman"
        " tarkkeita (ei å, ä, ö), numeroita sekä merkkejä ”.”, ”_” ja ”-”",
    ),
    "nb": (
        "3 til 32 tegn: bokstavene A–\u2060Z uten aksenter (ikke æ, ø, å), sifre og _ . -",
        "brukernavnet må være 3 til 32 tegn: bokstavene A–\u2060Z uten aksenter "
        "(ikke æ, ø, å), sifre,"
        " «.», «_» eller «-»",
    ),
    "pt": (
        "De 3 a 32 caracteres: as letras A–\u2060Z sem acentos (nem ç), dígitos e _ . -",
        "o nome de usuário precisa ter de 3 a 32 caracteres: "
        "as letras A–\u2060Z sem acentos (nem ç),"
        " dígitos, “.”, “_” ou “-”",
    ),
}
NAME_HELP = re.compile(r'<small class="help" id="username-help">(.*?)</small>', re.S)


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_the_sign_up_says_a_name_takes_the_letters_a_to_z_without_accents(
    client: FlaskClient, language: str
) -> None:
    """The name's pattern takes ASCII letters only: the help and the refusal of a name with an
    accented letter say so, in each language, rather than "letters" a Finn reads as taking ä."""
    client.set_cookie("lang", language)
    help_text, refusal = NAME_RULES[language]
    page = client.get("/auth/register").get_data(as_text=True)
    found = NAME_HELP.search(page)
    # As read: the symbols stand in a span of their own, which keeps them on one line.
    assert found and html.unescape(re.sub(r"<[^>]*>", "", found.group(1))) == help_text
    form = {"username": "Jääkarhu", "password": PASSWORD, "confirm": PASSWORD}
    refused = post_form(client, "/auth/register", form)
    assert refused.status_code == 422
    found = FORM_REFUSAL.search(refused.get_data(as_text=True))
    assert found and html.unescape(found.group(1)) == refusal


#: A team game's seats, in order (you, the dealer, CPU 1, CPU 2): seats 0 and 2 play against
#: 1 and 3, each labelled by whose team it is, as the result line names the dealer's team.
TEAM_LABELS = {
    "en": ["(your team)", "(the dealer's team)"] * 2,
    "fi": ["(sinun joukkueesi)", "(jakajan joukkue)"] * 2,
    "nb": ["(ditt lag)", "(dealerens lag)"] * 2,
    "pt": ["(sua equipe)", "(equipe do crupiê)"] * 2,
}
TEAM_LABEL = re.compile(r'<small class="team">(.*?)</small>')


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_team_games_seats_say_whose_team_they_play_for(
    player: FlaskClient, language: str
) -> None:
    player.set_cookie("lang", language)
    form = {"stake": "1", "preset": "custom", "seats": "4", "rule_teams": "on"}
    dealt = post_form(player, "/sota/games", form)
    assert dealt.status_code == 303, dealt.get_data(as_text=True)
    page = player.get(dealt.location).get_data(as_text=True)
    assert [html.unescape(label) for label in TEAM_LABEL.findall(page)] == TEAM_LABELS[language]


#: What a tie says surrendering gives back, for antes of 2 and 10 chips: Finnish writes the
#: object of "saat" as "1 pelimerkin", not as the amount alone ("1 pelimerkki").
SURRENDER_GIVES_BACK = {
    "en": ("surrender and get 1\u00a0chip back.", "surrender and get 5\u00a0chips back."),
    "fi": (
        "luovuta ja saat 1\u00a0pelimerkin takaisin.",
        "luovuta ja saat 5\u00a0pelimerkkiä takaisin.",
    ),
    "nb": ("gi opp og få 1\u00a0sjetong tilbake.", "gi opp og få 5\u00a0sjetonger tilbake."),
    "pt": ("desista e receba 1\u00a0ficha de volta.", "desista e receba 5\u00a0fichas de volta."),
}
TAG = re.compile(r"<[^>]+>")


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_tie_says_what_surrendering_gives_back_in_each_languages_grammar(
    app: Flask, player: FlaskClient, language: str
) -> None:
    plant_server_seed(app, "alice", {0: True, 1: True})
    player.set_cookie("lang", language)
    shown = []
    for ante in ("2", "10"):
        tie = post_form(player, "/casino-war/rounds", {"bet": ante})
        page = html.unescape(TAG.sub("", player.get(tie.location).get_data(as_text=True)))
        shown.append(page)
        post_form(player, f"{tie.location}/decision", {"choice": "surrender"})
    for page, gives_back in zip(shown, SURRENDER_GIVES_BACK[language], strict=True):
        assert gives_back in page


BET_REFUSALS = {
    "en": "bet must be from 100 to 50000 (minor units)",
    "fi": "bet-arvon on oltava välillä 100–\u206050000 (sadasosina)",
    "nb": "bet må være fra 100 til 50000 (hundredeler)",
    "pt": "bet precisa ser de 100 a 50000 (centésimos)",
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_refused_bet_through_the_api_reads_in_the_language_asked_for(
    client: FlaskClient, language: str
) -> None:
    """The table's bet rules are message ids too: an API client sending Accept-Language reads
    them in its language (the field keeps its API name)."""
    from web_support import bearer

    headers = {**bearer(client, "ilse"), "Accept-Language": language}
    answer = client.post("/api/v1/casino-war/rounds", json={"bet": 10**7}, headers=headers)
    assert answer.status_code == 422, answer.get_json()
    assert answer.get_json()["error"]["message"] == BET_REFUSALS[language]


THRESHOLD_REFUSALS = {
    "en": "Type the threshold as a whole number of sweets.",
    "fi": "Kirjoita raja kokonaisina karkkeina.",
    "nb": "Skriv grensen som et helt antall godterier.",
    "pt": "Digite o limite como um número inteiro de balas.",
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_refused_alert_threshold_reads_in_the_operators_language(
    app: Flask, language: str
) -> None:
    operator = operator_speaking(app, language, "/operator/alerts")
    rule = {"kind": "player_adjustments", "currency": "sweets", "period_hours": "24"}
    answer = post_form(operator, "/operator/alerts/rules", {**rule, "threshold": "2.5"})
    assert console_refusal(answer) == THRESHOLD_REFUSALS[language]


#: What revealing a seed pair says after its server seed, by the rounds played with the pair:
#: none, one, two. It said "its 1 rounds" ("sen pelikierrokset (1)") and "its 0 rounds".
REVEALED_ROUNDS = {
    "en": (
        "No rounds were played with it.",
        "You can verify its 1\u00a0round below.",
        "You can verify its 2\u00a0rounds below.",
    ),
    "fi": (
        "Sillä ei pelattu yhtään pelikierrosta.",
        "Voit tarkistaa sen 1\u00a0pelikierroksen alla.",
        "Voit tarkistaa sen 2\u00a0pelikierrosta alla.",
    ),
    "nb": (
        "Ingen runder ble spilt med det.",
        "Du kan kontrollere den 1\u00a0runden nedenfor.",
        "Du kan kontrollere de 2\u00a0rundene nedenfor.",
    ),
    "pt": (
        "Nenhuma rodada foi jogada com ele.",
        "Você pode verificar abaixo 1\u00a0rodada jogada com ele.",
        "Você pode verificar abaixo as 2\u00a0rodadas jogadas com ele.",
    ),
}
#: The words after the revealed server seed (64 hex digits and a full stop).
REVEALED = re.compile(r'<p class="flash ok" role="status">[^<]*?[0-9a-f]{64}\. ([^<]*)</p>')


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_revealed_seed_pair_counts_its_rounds_in_each_languages_grammar(
    app: Flask, player: FlaskClient, language: str
) -> None:
    post_form(player, "/language", {"locale": language, "next": "/fairness"})
    shown = []
    for played in range(3):
        if played:
            plant_server_seed(app, "alice", dict.fromkeys(range(played), False))
        for _ in range(played):
            assert post_form(player, "/casino-war/rounds", {"bet": "1"}).status_code == 303
        answer = post_form(player, "/fairness/rotate", {"client_seed": f"mine {played}"})
        page = player.get(answer.headers["Location"]).get_data(as_text=True)
        found = REVEALED.search(page)
        assert found, page
        shown.append(found.group(1))
    assert tuple(shown) == REVEALED_ROUNDS[language]


ROTATION_REFUSALS = {
    "en": "round {round} is still open; finish it before rotating",
    "fi": "pelikierros {round} on vielä kesken; pelaa se loppuun ennen vaihtoa",
    "nb": "runde {round} er fortsatt åpen; fullfør den før du bytter",
    "pt": "a rodada {round} ainda está aberta; termine-a antes de trocar",
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_refused_rotation_reads_in_the_players_language(
    app: Flask, player: FlaskClient, language: str
) -> None:
    """Rotating while a tie waited flashed "round 1 is still open; finish it before rotating"
    in English on every page language: the service wrote it whole, with no message id."""
    plant_server_seed(app, "alice", {0: True})
    post_form(player, "/language", {"locale": language, "next": "/fairness"})
    tie = post_form(player, "/casino-war/rounds", {"bet": "1"})
    round_id = redirected_id(tie)
    answer = post_form(player, "/fairness/rotate", {"client_seed": "mine"})
    assert refusal_shown(player, answer) == ROTATION_REFUSALS[language].format(round=round_id)


LATE_MOVE_REFUSALS = {
    "en": (
        "round {round} is settled; no decision is due",
        "game {game} is over; no move is due",
    ),
    "fi": (
        "pelikierros {round} on jo ratkaistu; päätöstä ei enää tarvita",
        "peli {game} on jo päättynyt; siirtoa ei enää tarvita",
    ),
    "nb": (
        "runde {round} er allerede gjort opp; ingen valg trengs",
        "spill {game} er allerede over; ingen trekk trengs",
    ),
    "pt": (
        "a rodada {round} já foi liquidada; nenhuma decisão é necessária",
        "a partida {game} já terminou; nenhuma jogada é necessária",
    ),
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_decision_or_a_move_sent_too_late_reads_in_the_players_language(
    app: Flask, player: FlaskClient, language: str
) -> None:
    """A second tab's decision on a tie the first already decided, and a move sent to a Sota
    game that is over, flashed their refusal in English on every page language."""
    plant_server_seed(app, "alice", {0: True})
    post_form(player, "/language", {"locale": language, "next": "/casino-war"})
    tie = post_form(player, "/casino-war/rounds", {"bet": "1"})
    round_id = redirected_id(tie)
    decide = f"/casino-war/rounds/{round_id}/decision"
    assert post_form(player, decide, {"choice": "war"}).status_code == 303
    late = post_form(player, decide, {"choice": "surrender"})
    decision, move = LATE_MOVE_REFUSALS[language]
    assert refusal_shown(player, late) == decision.format(round=round_id)
    game = post_form(player, "/sota/games", {"stake": "1", "preset": "nordic"})
    game_id = redirected_id(game)  # a whole game, over at once
    late = post_form(player, f"/sota/games/{game_id}/moves", {"up": "AS"})
    assert refusal_shown(player, late) == move.format(game=game_id)


COPIED_MOVE_REFUSALS = {
    "en": "game {game} waits for move 1, not move 0",
    "fi": "peli {game} odottaa siirtoa 1, ei siirtoa 0",
    "nb": "spill {game} venter på trekk 1, ikke trekk 0",
    "pt": "a partida {game} aguarda a jogada 1, não a jogada 0",
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_move_a_second_tab_sends_once_it_was_laid_reads_in_the_players_language(
    app: Flask, player: FlaskClient, language: str
) -> None:
    move = plant_seed_repeating_a_move(app, "alice")
    post_form(player, "/language", {"locale": language, "next": "/sota"})
    form = {"stake": "1", "preset": "custom", "rule_prisoners_of_war": "on"}
    game = post_form(player, "/sota/games", form)
    game_id = redirected_id(game)
    lay = {"up": move[-1], "down": move[:-1], "move": "0"}
    assert post_form(player, f"/sota/games/{game_id}/moves", lay).status_code == 303
    copied = post_form(player, f"/sota/games/{game_id}/moves", lay)
    assert refusal_shown(player, copied) == COPIED_MOVE_REFUSALS[language].format(game=game_id)
    # A form sent with a number that is no number (by hand: the page writes digits).
    garbled = post_form(player, f"/sota/games/{game_id}/moves", {**lay, "move": "one"})
    assert refusal_shown(player, garbled) == NO_MOVE_NUMBER[language]


NO_MOVE_NUMBER = {
    "en": "move must be a whole number from 0",
    "fi": "move: arvon on oltava kokonaisluku, vähintään 0",
    "nb": "«move» må være et helt tall fra 0 og oppover",
    "pt": "“move” precisa ser um número inteiro a partir de 0",
}


QUERY_REFUSALS = {
    "en": "{name} must be a whole number from 0 to 9007199254740991",
    "fi": "{name}: arvon on oltava kokonaisluku välillä 0–\u20609007199254740991",
    "nb": "«{name}» må være et helt tall fra 0 til 9007199254740991",
    "pt": "“{name}” precisa ser um número inteiro de 0 a 9007199254740991",
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_refused_console_query_reads_in_the_operators_language(app: Flask, language: str) -> None:
    """A list's cursor or the log's entry number that is no number ("?cursor=zzz") was refused
    in English on every page language (the parameter keeps its name)."""
    operator = operator_speaking(app, language, "/operator/audit")
    pat = add_user(app, "pat", "player")
    answer = operator.get(f"/operator/players/{pat}/lists/rounds?cursor=zzz")
    assert console_refusal(answer) == QUERY_REFUSALS[language].format(name="cursor")
    # The log's entry number is typed in its form: named by the form's label.
    answer = operator.get("/operator/audit?from_seq=zzz")
    assert console_refusal(answer) == ENTRY_NUMBER_REFUSALS[language]


ENTRY_NUMBER_REFUSALS = {
    "en": "“Go to entry #” must be a whole number from 0 to 9007199254740991.",
    "fi": "Kentän ”Siirry merkintään #” arvon on oltava kokonaisluku välillä "
    "0–\u20609007199254740991.",
    "nb": "«Gå til oppføring nr.» må være et helt tall fra 0 til 9007199254740991.",
    "pt": "“Ir para a entrada nº” precisa ser um número inteiro de 0 a 9007199254740991.",
}


CHIP_THRESHOLD_REFUSALS = {
    "en": "Type the threshold in chips, like 25 or 12.50 (at most two decimals).",
    "fi": "Kirjoita raja pelimerkkeinä, esimerkiksi 25 tai 12,50 (enintään kaksi desimaalia).",
    "nb": "Skriv grensen i sjetonger, som 25 eller 12,50 (høyst to desimaler).",
    "pt": "Digite o limite em fichas, como 25 ou 12,50 (no máximo duas casas decimais).",
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_refused_chip_threshold_writes_its_example_as_the_language_writes_chips(
    app: Flask, language: str
) -> None:
    """The example amount has the language's decimal sign, as the page's chips and the form
    that reads the threshold have (12,50 in Finnish, Norwegian and Portuguese)."""
    operator = operator_speaking(app, language, "/operator/alerts")
    rule = {"kind": "player_adjustments", "currency": "chips", "period_hours": "24"}
    answer = post_form(operator, "/operator/alerts/rules", {**rule, "threshold": "abc"})
    assert console_refusal(answer) == CHIP_THRESHOLD_REFUSALS[language]


PERIOD_REFUSALS = {
    "en": "The period in hours must be a whole number.",
    "fi": "Jakso tunteina: arvon on oltava kokonaisluku.",
    "nb": "Feltet «perioden i timer» må være et helt tall.",
    "pt": "O campo “período em horas” precisa ser um número inteiro.",
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_refused_alert_period_names_the_field_in_the_operators_language(
    app: Flask, language: str
) -> None:
    operator = operator_speaking(app, language, "/operator/alerts")
    rule = {"kind": "large_win", "currency": "chips", "threshold": "25", "period_hours": "1.5"}
    answer = post_form(operator, "/operator/alerts/rules", rule)
    assert console_refusal(answer) == PERIOD_REFUSALS[language]


#: A refused ante, said with the field's label: Finnish starts the sentence with the label,
#: which the form writes in lower case ("panos: arvon on oltava ...").
ANTE_REFUSALS = {
    "en": "The ante must be a whole number of chips, like 5 or 25.",
    "fi": "Panos: arvon on oltava kokonaisluku (pelimerkkiä), esimerkiksi 5 tai 25.",
    "nb": "Feltet «ante» må være et helt antall sjetonger, for eksempel 5 eller 25.",
    "pt": "O campo “aposta inicial” precisa ser um número inteiro de fichas, como 5 ou 25.",
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_refusal_that_starts_with_the_fields_label_starts_with_a_capital(
    player: FlaskClient, language: str
) -> None:
    post_form(player, "/language", {"locale": language, "next": "/casino-war"})
    answer = post_form(player, "/casino-war/rounds", {"bet": "abc"})
    assert answer.status_code == 422  # the table again, what was typed kept
    shown = FORM_REFUSAL.search(answer.get_data(as_text=True))
    assert shown and html.unescape(shown.group(1)) == ANTE_REFUSALS[language]


BODY_REFUSALS = {
    "en": (
        "bet is required",
        "unknown field 'stake'",
        "bet must be an integer, not a string",
        "bet must be a multiple of 100",
    ),
    "fi": (
        "bet puuttuu",
        "tuntematon kenttä 'stake'",
        "bet: arvon on oltava kokonaisluku, ei merkkijono",
        "bet: arvon on oltava luvun 100 monikerta",
    ),
    "nb": (
        "bet mangler",
        "ukjent felt 'stake'",
        "bet må være et heltall, ikke en streng",
        "bet må være et multiplum av 100",
    ),
    "pt": (
        "bet é obrigatório",
        "campo desconhecido 'stake'",
        "bet precisa ser um número inteiro, não um texto",
        "bet precisa ser um múltiplo de 100",
    ),
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_body_the_schema_refuses_reads_in_the_language_asked_for(
    client: FlaskClient, language: str
) -> None:
    """The schema's own refusals (pydantic's) are message ids as well; the field keeps its name."""
    from web_support import bearer

    headers = {**bearer(client, "ines"), "Accept-Language": language}
    bodies = ({}, {"bet": 500, "stake": 5}, {"bet": "500"}, {"bet": 150})
    for body, message in zip(bodies, BODY_REFUSALS[language], strict=True):
        answer = client.post("/api/v1/casino-war/rounds", json=body, headers=headers)
        assert answer.status_code == 422, answer.get_json()
        assert answer.get_json()["error"]["message"] == message


#: A value the schema lists its choices for, and a string or list too short: pydantic said
#: "'war' or 'surrender'" (with the English "or") and "at least 1 characters" in every language.
CHOICES_AND_LENGTHS = {
    "en": (
        "choice must be 'war' or 'surrender'",
        "role must be 'player', 'operator' or 'auditor'",
        "client_seed: string should have at least 1\u00a0character",
        "cards must have at least 1\u00a0item",
        "client_seed: string should have at most 64\u00a0characters",
    ),
    "fi": (
        "choice: arvon on oltava 'war' tai 'surrender'",
        "role: arvon on oltava 'player', 'operator' tai 'auditor'",
        "client_seed: merkkijonossa on oltava vähintään 1\u00a0merkki",
        "cards: alkioita on oltava vähintään 1",
        "client_seed: merkkijonossa saa olla enintään 64\u00a0merkkiä",
    ),
    "nb": (
        "choice må være 'war' eller 'surrender'",
        "role må være 'player', 'operator' eller 'auditor'",
        "client_seed: strengen må ha minst 1\u00a0tegn",
        "cards må ha minst 1\u00a0element",
        "client_seed: strengen kan ha høyst 64\u00a0tegn",
    ),
    "pt": (
        "choice precisa ser 'war' ou 'surrender'",
        "role precisa ser 'player', 'operator' ou 'auditor'",
        "client_seed: o texto precisa ter pelo menos 1\u00a0caractere",
        "cards precisa ter pelo menos 1\u00a0item",
        "client_seed: o texto pode ter no máximo 64\u00a0caracteres",
    ),
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_the_schemas_choices_and_lengths_read_whole_in_the_language_asked_for(
    app: Flask, client: FlaskClient, language: str
) -> None:
    """The values a field takes are joined with the language's "or", and a length counts its
    characters or items with the plural form the number takes."""
    from operator_support import bearer as staff_bearer
    from web_support import bearer

    add_user(app, "olli", role="operator")
    player = add_user(app, "pekka")
    operator = {**staff_bearer(app, "olli"), "Accept-Language": language}
    headers = {**bearer(client, "ines"), "Accept-Language": language}
    answers = (
        client.post("/api/v1/casino-war/rounds/1/decision", json={"choice": "x"}, headers=headers),
        client.put(f"/api/v1/operator/players/{player}/role", json={"role": "x"}, headers=operator),
        client.post("/api/v1/fairness/rotate", json={"client_seed": ""}, headers=headers),
        client.post("/api/v1/sota/games/1/moves", json={"cards": []}, headers=headers),
        client.post("/api/v1/fairness/rotate", json={"client_seed": "x" * 65}, headers=headers),
    )
    shown = [answer.get_json()["error"]["message"] for answer in answers]
    assert shown == list(CHOICES_AND_LENGTHS[language])


#: A checkpoint over one entry, and over two, that no one signed: it read "over 1 entries"
#: ("1 merkintää kattavaa", "1 oppføringer", "1 entradas").
UNSIGNED_CHECKPOINTS = {
    "en": (
        "no checkpoint was signed over 1\u00a0entry",
        "no checkpoint was signed over 2\u00a0entries (old_size)",
    ),
    "fi": (
        "yhtään 1\u00a0merkinnän kattavaa tarkistuspistettä ei ole allekirjoitettu",
        "yhtään 2\u00a0merkintää kattavaa tarkistuspistettä ei ole allekirjoitettu (old_size)",
    ),
    "nb": (
        "ingen sjekkpunkt ble signert over 1\u00a0oppføring",
        "ingen sjekkpunkt ble signert over 2\u00a0oppføringer (old_size)",
    ),
    "pt": (
        "nenhum ponto de controle que cubra 1\u00a0entrada foi assinado",
        "nenhum ponto de controle que cubra 2\u00a0entradas foi assinado (old_size)",
    ),
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_checkpoint_no_one_signed_counts_its_entries_in_the_language_asked_for(
    client: FlaskClient, language: str
) -> None:
    headers = {"Accept-Language": language}
    one = client.get("/api/v1/transparency/checkpoints/1", headers=headers)
    sizes = {"old_size": 2, "new_size": 3}
    two = client.get("/api/v1/transparency/consistency", query_string=sizes, headers=headers)
    assert (one.status_code, two.status_code) == (404, 404)
    shown = (one.get_json()["error"]["message"], two.get_json()["error"]["message"])
    assert shown == UNSIGNED_CHECKPOINTS[language]


# --- the messages a page leaves for the next ------------------------------------------------

LOGIN_FIRST = {
    "en": "Please log in first.",
    "fi": "Kirjaudu ensin sisään.",
    "nb": "Logg inn først.",
    "pt": "Entre na sua conta primeiro.",
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_the_welcome_after_sign_up_reads_in_the_language_picked_on_the_sign_up_page(
    client: FlaskClient, language: str
) -> None:
    """The new account has no language of its own yet: the welcome is worded, and the lobby
    shown, in the one the visitor picked, so the two agree."""
    client.get("/auth/register")
    post_form(client, "/language", {"locale": language, "next": "/auth/register"})
    lobby = client.get(register_page(client, "aino").location).get_data(as_text=True)
    assert f'<html lang="{language}">' in lobby
    welcome = {
        "en": "Welcome to the table, aino!",
        "fi": "Tervetuloa pöytään, aino!",
        "nb": "Velkommen til bordet, aino!",
        "pt": "Bem-vindo à mesa, aino!",
    }[language]
    assert welcome in html.unescape(lobby)


def test_the_welcome_reads_in_the_language_of_the_page_that_shows_it(client: FlaskClient) -> None:
    """The welcome waits for the next page: a player who signs up in Finnish (the browser's
    language) and picks Norwegian before the lobby is drawn reads it in Norwegian, as the lobby
    around it, not in the Finnish it was left in."""
    finnish = {"Accept-Language": "fi"}
    client.get("/auth/register", headers=finnish)
    form = {"username": "aino", "password": PASSWORD, "confirm": PASSWORD}
    signed_up = post_form(client, "/auth/register", form, headers=finnish)
    assert signed_up.status_code == 303
    picked = post_form(client, "/language", {"locale": "nb", "next": signed_up.location})
    lobby = client.get(picked.location).get_data(as_text=True)
    assert '<html lang="nb">' in lobby
    assert "Velkommen til bordet, aino!" in html.unescape(lobby)
    assert "Tervetuloa" not in lobby


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_the_prompt_to_log_in_reads_in_the_visitors_language(
    client: FlaskClient, language: str
) -> None:
    client.set_cookie("lang", language)
    sent = client.get("/history")
    assert sent.status_code == 303 and "/auth/login" in sent.location
    page = html.unescape(client.get(sent.location).get_data(as_text=True))
    assert f'<p class="flash info" role="status">{LOGIN_FIRST[language]}</p>' in page


# --- alerts in each operator's words --------------------------------------------------------

#: One alert (adjustments to a player over a threshold), as each language says it: its amounts
#: and its period kept beside their words.
ALERT_MESSAGES = {
    "en": "adjustments to pat reached 30\u00a0sweets within 24\u00a0h, over the threshold of "
    "20\u00a0sweets",
    "fi": "pelaajalle pat tehtyjen oikaisujen summa 24\u00a0tunnin aikana on 30\u00a0karkkia, mikä "
    "ylittää rajan 20\u00a0karkkia",
    "nb": "justeringer til pat nådde 30\u00a0godterier i løpet av 24\u00a0t, over terskelen på "
    "20\u00a0godterier",
    "pt": "os ajustes para pat chegaram a 30\u00a0balas em 24\u00a0h, acima do limite de "
    "20\u00a0balas",
}
ALERT_CELL = re.compile(
    r'<tr data-alert="\d+"[^>]*>\s*<td class="num"[^>]*>\d+</td>'
    r"<td[^>]*>.*?</td><td[^>]*>(.*?)</td>"
)


def _shown_alerts(client: FlaskClient) -> list[str]:
    page = client.get("/operator/alerts").get_data(as_text=True)
    return [html.unescape(cell) for cell in ALERT_CELL.findall(page)]


def _adjustments_over_a_threshold(app: Flask, operator: int) -> None:
    """Three adjustments of 10 sweets to pat, over a rule's threshold of 20: one alert."""
    pat = add_user(app, "pat")
    session = app.extensions["sota_casino.sessionmaker"]()
    try:
        alerts.create_rule(session, operator, "player_adjustments", "sweets", 20, 24)
        for _ in range(3):
            money.adjust(session, operator, pat, "sweets", 10, "bonus")
    finally:
        session.close()


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_an_alert_reads_in_each_operators_language(
    app: Flask, client: FlaskClient, language: str
) -> None:
    olli = add_user(app, "olli", role="operator")
    _adjustments_over_a_threshold(app, olli)
    console = client_as(app, olli)
    post_form(console, "/language", {"locale": language, "next": "/operator/alerts"})
    assert _shown_alerts(console) == [ALERT_MESSAGES[language]]
    # The same stored alert, to a second operator who reads English.
    assert _shown_alerts(client_as(app, add_user(app, "otto", role="operator"))) == [
        ALERT_MESSAGES["en"]
    ]

    token = client.post("/api/v1/auth/token", json={"username": "olli", "password": PASSWORD})
    auth = {"Authorization": f"Bearer {token.get_json()['token']}"}
    asked = client.get("/api/v1/operator/alerts", headers={**auth, "Accept-Language": language})
    english = client.get("/api/v1/operator/alerts", headers=auth)
    [found] = asked.get_json()["alerts"]
    assert found["message"] == ALERT_MESSAGES[language]
    assert found["params"] == {
        "name": "pat",
        "total": 30,
        "currency": "sweets",
        "hours": 24,
        "threshold": 20,
    }
    assert english.get_json()["alerts"][0]["message"] == ALERT_MESSAGES["en"]
    seen = client.post(
        f"/api/v1/operator/alerts/{found['id']}/acknowledge",
        headers={**auth, "Accept-Language": language},
    )
    assert seen.get_json()["message"] == ALERT_MESSAGES[language]


RULE_WORDS = {
    "en": "a player wins more than 2,500\u00a0chips in one round",
    "fi": "pelaajan voitto yhdellä pelikierroksella on yli 2\u00a0500\u00a0pelimerkkiä",
    "nb": "en spiller vinner mer enn 2\u00a0500\u00a0sjetonger i én runde",
    "pt": "um jogador ganha mais de 2.500\u00a0fichas numa rodada",
}
RULE_CELL = re.compile(r'<tr data-rule="\d+"><td class="num"[^>]*>\d+</td><td[^>]*>(.*?)</td>')


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_an_alert_rule_reads_in_each_operators_language(
    app: Flask, client: FlaskClient, language: str
) -> None:
    """A rule is described in the reader's language, its threshold in chips, on the console
    (the page and the notice of a rule added) and in the API's answers."""
    olli = client_as(app, add_user(app, "olli", role="operator"))
    post_form(olli, "/language", {"locale": language, "next": "/operator/alerts"})
    form = {"kind": "large_win", "currency": "chips", "threshold": "2500", "period_hours": "24"}
    added = post_form(olli, "/operator/alerts/rules", form, follow_redirects=True)
    page = html.unescape(added.get_data(as_text=True))
    assert RULE_WORDS[language] in page.split('data-rule="')[0]  # the notice, above the list
    assert [html.unescape(c) for c in RULE_CELL.findall(page)] == [RULE_WORDS[language]]

    token = client.post("/api/v1/auth/token", json={"username": "olli", "password": PASSWORD})
    auth = {"Authorization": f"Bearer {token.get_json()['token']}"}
    asked = client.get(
        "/api/v1/operator/alerts/rules", headers={**auth, "Accept-Language": language}
    )
    [rule] = asked.get_json()["rules"]
    assert (rule["description"], rule["threshold"]) == (RULE_WORDS[language], 250_000)
    english = client.get("/api/v1/operator/alerts/rules", headers=auth).get_json()["rules"]
    assert english[0]["description"] == RULE_WORDS["en"]
    turned_off = client.put(
        f"/api/v1/operator/alerts/rules/{rule['id']}/enabled",
        json={"enabled": False},
        headers={**auth, "Accept-Language": language},
    )
    assert turned_off.get_json()["description"] == RULE_WORDS[language]


def test_an_alert_stored_as_text_reads_as_it_was_stored(app: Flask, client: FlaskClient) -> None:
    """An alert raised before messages were kept as ids is English text with no params; a
    message no version knows reads as stored too, its params left out."""
    olli = add_user(app, "olli", role="operator")
    stored = (
        "adjustments to pat reached 3000 chips (minor units) within 24 h, over the threshold of 100"
    )
    unknown = "%(name)s did something this version never says"
    session = app.extensions["sota_casino.sessionmaker"]()
    try:
        rule = alerts.create_rule(session, olli, "player_adjustments", "chips", 100, 24)
        with session.begin():
            for message, params in ((stored, None), (unknown, {"name": "pat"})):
                session.add(
                    Alert(
                        rule_id=rule.id,
                        subject="user:1",
                        message=message,
                        params=params,
                        data={},
                        raised_at=datetime.now(UTC),
                    )
                )
    finally:
        session.close()
    console = client_as(app, olli)
    post_form(console, "/language", {"locale": "fi", "next": "/operator/alerts"})
    assert _shown_alerts(console) == [unknown, stored]
    token = client.post("/api/v1/auth/token", json={"username": "olli", "password": PASSWORD})
    headers = {"Authorization": f"Bearer {token.get_json()['token']}", "Accept-Language": "fi"}
    found = client.get("/api/v1/operator/alerts", headers=headers).get_json()["alerts"]
    assert [(a["message"], a["params"]) for a in found] == [
        (unknown, {"name": "pat"}),
        (stored, None),
    ]


#: A date as each language writes it (the pages' ``when``): Dec 4, 2026 / 4.12.2026 / ...
DATES = {
    "en": r"[A-Z][a-z]{2} \d{1,2}, \d{4}",
    "fi": r"\d{1,2}\.\d{1,2}\.\d{4}",
    "nb": r"\d{1,2}\. [a-z]{3}\.? \d{4}",
    "pt": r"\d{1,2} de [a-z]{3}\.? de \d{4}",
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_revealed_seed_pair_s_time_reads_as_the_language_writes_times(
    client: FlaskClient, language: str
) -> None:
    client.set_cookie("lang", language)
    register_page(client, "aino")
    post_form(client, "/fairness/rotate", {"client_seed": "my own seed"})
    page = client.get("/fairness").get_data(as_text=True)
    revealed = page.split('id="revealed"')[1]
    found = re.search(r'<time datetime="([^"]+)">([^<]+)</time>', revealed)
    assert found, revealed[:2000]
    stamp, shown = found.groups()
    assert stamp.endswith("Z") and not re.search(r"\dT\d", shown)
    assert re.match(DATES[language], shown) and shown.endswith(" UTC"), shown


# --- amounts and their words ------------------------------------------------------------------

NO_BREAK = "\u00a0"


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_an_amount_and_its_unit_word_never_part_at_a_line_s_end(
    app: Flask, client: FlaskClient, language: str
) -> None:
    """ "12 chips", "4 min", "12 pelimerkkiä": a no-break space joins the number and its word
    (as a percentage's sign), whether a filter, a view or a template's plural writes them."""
    with app.test_request_context(headers={"Cookie": f"lang={language}"}):
        written = [
            format.chips_text(1200),
            format.chips_text(-150, signed=True),
            format.sweets_text(3),
            format.plural(100, "chip"),
            format.age(240),
            format.age(3 * 3600),
            format.age(2 * 86_400),
        ]
    for text in written:
        assert NO_BREAK in text and " " not in text, (language, text)
    register_page(client, "aino")
    post_form(client, "/language", {"locale": language, "next": "/lobby"})
    table = client.get("/casino-war").get_data(as_text=True)
    pill = re.search(
        r'data-testid="chips-balance"><span class="coin"[^>]*></span>'
        r'<span data-balance="chips">(.*?)</span>',
        table,
    )
    assert pill, "the table shows no chips balance"
    assert re.fullmatch(rf"<strong data-amount>[^<]+</strong>{NO_BREAK}\w+", pill.group(1)), (
        pill.group(1)
    )


# --- refusals reached with hand-made values -------------------------------------------------------


def refusal_text(client: FlaskClient, answer: Any) -> str:
    """Return a refusal as its reader sees it: the API's message, a form's flash, or the error
    page's or the form's own words."""
    if answer.is_json:
        message: str = answer.get_json()["error"]["message"]
        return message
    if answer.status_code == 303:
        return refusal_shown(client, answer)
    text = answer.get_data(as_text=True)
    found = (
        FORM_REFUSAL.search(text)
        or re.search(r'<p class="error"[^>]*>(.*?)</p>', text, re.S)
        or ERROR_PAGE_MESSAGE.search(text)
    )
    assert found, text
    return html.unescape(found.group(1)).strip()


def _tie_decision(app: Flask, client: FlaskClient, language: str) -> str:
    register_page(client, f"alice{language}")
    plant_server_seed(app, f"alice{language}", {0: True})
    post_form(client, "/language", {"locale": language, "next": "/casino-war"})
    tie = post_form(client, "/casino-war/rounds", {"bet": "1"})
    decide = f"{tie.headers['Location']}/decision"
    return refusal_text(client, post_form(client, decide, {"choice": "double"}))


def _log_in_with_nul(app: Flask, client: FlaskClient, language: str) -> str:
    post_form(client, "/language", {"locale": language, "next": "/auth/login"})
    form = {"username": "an\x00na", "password": PASSWORD}
    return refusal_text(client, post_form(client, "/auth/login", form))


def _console_role(role: str) -> Callable[[Flask, FlaskClient, str], str]:
    def refused(app: Flask, client: FlaskClient, language: str) -> str:
        olli = add_user(app, f"olli{language}", role="operator")
        operator = client_as(app, olli)
        post_form(operator, "/language", {"locale": language, "next": "/operator/players"})
        target = olli if role == "auditor" else add_user(app, f"otto{language}", role="auditor")
        url = f"/operator/players/{target}/role"
        return refusal_text(operator, post_form(operator, url, {"role": role, "once": "k1"}))

    return refused


def _api(
    method: str, path: str, *, auth: bool = True, **request: Any
) -> Callable[[Flask, FlaskClient, str], str]:
    def refused(app: Flask, client: FlaskClient, language: str) -> str:
        from web_support import bearer

        given = dict(request)  # each language's call sends the same request
        headers = {
            **(bearer(client, f"bea{language}") if auth else {}),
            **given.pop("headers", {}),
            "Accept-Language": language,
        }
        answer = client.open(path, method=method, headers=headers, **given)
        assert 400 <= answer.status_code < 500, answer.get_json()
        return refusal_text(client, answer)

    return refused


def _move_refused(
    cards: Callable[[list[str], str], list[str]],
) -> Callable[[Flask, FlaskClient, str], str]:
    """Refuse a Prisoners of War move made of ``cards(won, outsider)``: of the won cards the
    game offers, and a card that is not among them."""

    def refused(app: Flask, client: FlaskClient, language: str) -> str:
        from web_support import bearer

        headers = {**bearer(client, f"bea{language}"), "Accept-Language": language}
        rules = {"prisoners_of_war": True, "max_tricks": 80}
        for _ in range(20):  # most such games wait for a move; the rest end at once
            game = client.post(
                "/api/v1/sota/games", json={"stake": 1, "rules": rules}, headers=headers
            ).get_json()
            if game["status"] == "awaiting_move":
                won, count = game["pending"]["options"], game["pending"]["count"]
                deck = (rank + suit for rank in "23456789TJQKA" for suit in "CDHS")
                outsider = next(card for card in deck if card not in won)
                move = {"cards": cards(won[:count], outsider)}
                url = f"/api/v1/sota/games/{game['id']}/moves"
                return refusal_text(client, client.post(url, json=move, headers=headers))
        raise AssertionError("no game waited for a move")

    return refused


def _signed_in_page_calls_the_api(app: Flask, client: FlaskClient, language: str) -> str:
    register_page(client, f"alice{language}")
    answer = client.post("/api/v1/me/topup", json={}, headers={"Accept-Language": language})
    return refusal_text(client, answer)


def _proof_not_yet_anchored(app: Flask, client: FlaskClient, language: str) -> str:
    from web_support import bearer

    app.config["CHECKPOINT_MIN_SECONDS"] = 3600
    headers = {**bearer(client, f"bea{language}"), "Accept-Language": language}
    for _ in range(2):  # the first is covered by the first checkpoint, the next waits an hour
        round_ = client.post("/api/v1/sota/games", json={"stake": 1}, headers=headers).get_json()
        answer = client.get(f"/api/v1/rounds/{round_['id']}/proof", headers=headers)
    assert answer.status_code == 409, answer.get_json()
    return refusal_text(client, answer)


HAND_MADE_REFUSALS: dict[str, tuple[Callable[[Flask, FlaskClient, str], str], str]] = {
    "decision": (
        _tie_decision,
        "The form is garbled: load the page again and make the change there.",
    ),
    "NUL in a form": (_log_in_with_nul, "“Username” must not contain a NUL character."),
    "role": (_console_role("king"), "Choose one of the options offered for “Role”."),
    "own role": (_console_role("auditor"), "operators cannot change their own role"),
    "won cards": (
        _move_refused(lambda won, outsider: [*won[1:], outsider]),
        " is not among your won cards: ",
    ),
    "card count": (
        _move_refused(lambda won, outsider: [*won, outsider]),
        "move 1 must lay exactly ",
    ),
    "NUL in JSON": (
        _api("POST", "/api/v1/auth/token", auth=False, json={"username": "a\x00", "password": "x"}),
        "username must not contain a NUL character",
    ),
    "lone surrogate": (
        _api(
            "POST",
            "/api/v1/auth/token",
            auth=False,
            data='{"username": "a\\ud800", "password": "x"}',
            content_type="application/json",
        ),
        "username is not valid Unicode text",
    ),
    "NUL in a field name": (
        _api("POST", "/api/v1/casino-war/rounds", json={"bet\x00": 1}),
        "a field name must not contain a NUL character",
    ),
    "body no object": (
        _api("POST", "/api/v1/casino-war/rounds", json=[1]),
        "the body must be a JSON object",
    ),
    "query twice": (
        _api("GET", "/api/v1/rounds?limit=1&limit=2"),
        "limit is given more than once",
    ),
    "top-up": (
        _api("POST", "/api/v1/me/topup", json={"currency": "chips"}),
        "a top-up is given only below ",
    ),
    "idempotency key": (
        _api(
            "POST",
            "/api/v1/me/topup",
            json={"currency": "chips"},
            headers={"Idempotency-Key": "a b"},
        ),
        "Idempotency-Key is not one key of 1 to 64 visible ASCII characters other than a comma",
    ),
    "no token": (
        _api("GET", "/api/v1/me", auth=False),
        "send 'Authorization: Bearer TOKEN' (get one from POST /auth/token)",
    ),
    "not bearer": (
        _api("GET", "/api/v1/me", auth=False, headers={"Authorization": "Basic eDp5"}),
        "the Authorization header must be 'Bearer TOKEN'",
    ),
    "bad token": (
        _api("GET", "/api/v1/me", auth=False, headers={"Authorization": "Bearer nope"}),
        "the bearer token is invalid or has expired; get a new one",
    ),
    "proof not yet anchored": (_proof_not_yet_anchored, "is not in a signed checkpoint yet"),
    "cookie without CSRF": (
        _signed_in_page_calls_the_api,
        "a session cookie alone cannot authorize this call: send a bearer token, or the page's "
        "CSRF token in X-CSRF-Token",
    ),
}


@pytest.mark.parametrize("case", sorted(HAND_MADE_REFUSALS))
def test_a_refusal_of_hand_made_values_reads_in_the_language_asked_for(
    app: Flask, case: str
) -> None:
    """Refusals written whole in English (f-strings, no message id) read in English on every
    page language and to an API client sending ``Accept-Language``; the English stays as it was."""
    reach, english = HAND_MADE_REFUSALS[case]
    shown = {}
    for language in ("en", "fi"):
        shown[language] = reach(app, app.test_client(), language)
    assert english in shown["en"], shown["en"]
    assert shown["fi"] != shown["en"] and english not in shown["fi"], shown["fi"]


#: The words a message counts: a count before one of them ("%(made)s moves") takes its plural
#: form from the count, so the message must be a plural one (ngettext, Nn_).
COUNTED_WORDS = (
    "accounts|antes|cards|entries|games|moves|problems|rounds|seats|tie bets|transfers|tricks"
)
#: Messages that count in a plain message on purpose: a worked example whose counts are fixed,
#: each above one; and a reveal that "says rounds" (its field), whose placeholder before the
#: word is the pair it names, no count.
COUNTED_ON_PURPOSE = {
    "Your queen beats the dealer's five: you take all %(pot)s cards and put them under your "
    "pile. You now hold %(yours)s cards and the dealer %(theirs)s.",
    anchors.REVEAL_NAMES_UNBET,
}


def test_every_message_that_counts_things_takes_its_plural_form_from_the_count() -> None:
    """A count in a plain message reads "1 moves" in English, and wrong in every language
    whose forms differ: "the game ended after %(made)s moves" must be a plural message, and
    so must "%(rounds)s settled rounds" (a word between the count and what it counts; an
    amount "in antes" or a share "of rounds" counts nothing)."""
    counting = re.compile(rf"%\(\w+\)s (?:(?!in\b|of\b)[a-z]+ )?(?:more\b|(?:{COUNTED_WORDS})\b)")
    plain = [m for m in extracted_messages() if isinstance(m, str) and counting.search(m)]
    assert sorted(set(plain) - COUNTED_ON_PURPOSE) == []


#: The header's balances of one chip and one sweet, as each language writes them.
ONE_OF_EACH = {
    "en": ["1", "chip", "1", "sweet"],
    "fi": ["1", "pelimerkki", "1", "karkki"],
    "nb": ["1", "sjetong", "1", "godteri"],
    "pt": ["1", "ficha", "1", "bala"],
}


@pytest.mark.parametrize("language", sorted(ONE_OF_EACH))
def test_the_header_counts_the_balances_in_the_plural_form_of_their_amount(
    app: Flask, language: str
) -> None:
    """The header wrote its units as fixed words: "1 chips", "1 pelimerkkiä"."""
    player = add_user(app, "pat", "player")
    operator = add_user(app, "olga", "operator")
    with db(app) as session:
        held = money.balances(session, player)
        money.adjust(session, operator, player, "chips", 100 - held.chips, "down to one")
        money.adjust(session, operator, player, "sweets", 1 - held.sweets, "down to one")
    page = client_as(app, player)
    page.set_cookie("lang", language)
    text = page.get("/lobby").get_data(as_text=True)
    header = text.split('data-testid="header-balance"')[1].split("</a>")[0]
    assert (
        html.unescape(re.sub(r"<[^>]*>", " ", header.split(">", 1)[1])).split()
        == (ONE_OF_EACH[language])
    )


#: Finnish amounts written with their unit ("1 karkki", "500 karkkia") make no range with a dash
#: ("1 karkki–500 karkkia"): the least and the most are said apart, "vähintään … ja enintään …",
#: which take the amount as it is, one or many.
STAKES_AT_THIS_TABLE = {
    "en": "At this table now: stakes from 1 sweet to 500 sweets",
    "fi": "Tässä pöydässä nyt: panos vähintään 1 karkki ja enintään 500 karkkia",
    "nb": "Ved dette bordet nå: innsatser fra 1 godteri til 500 godterier",
    "pt": "Nesta mesa agora: apostas de 1 bala a 500 balas",
}


@pytest.mark.parametrize("language", sorted(STAKES_AT_THIS_TABLE))
def test_the_sota_rules_say_the_tables_stakes_in_each_languages_grammar(
    app: Flask, client: FlaskClient, language: str
) -> None:
    olga = add_user(app, "olga", "operator")
    with db(app) as session:
        settings.update_table(session, olga, "sota", {"min_stake": 1, "max_stake": 500})
    client.set_cookie("lang", language)
    page = html.unescape(re.sub(r"<[^>]+>", "", client.get("/rules/sota").get_data(as_text=True)))
    assert STAKES_AT_THIS_TABLE[language] in page.replace("\xa0", " ")


#: A Finnish value that must lie in a range lies "välillä 5–500" (where), not "väliltä" (the
#: case of picking from it: "valitse luku väliltä 1–10").
FINNISH_MUST_LIE_FROM_A_RANGE = re.compile(r"\boltava\b[^.;:]*\bväliltä\b")


def test_finnish_says_a_value_must_lie_within_a_range_not_from_it() -> None:
    wrong = [
        finnish
        for message in _catalogue("fi")
        if message.id
        for finnish in _strings(message.string)
        if FINNISH_MUST_LIE_FROM_A_RANGE.search(finnish)
    ]
    assert wrong == []


#: Brazilian Portuguese names the Casino War choice by its verb where the player does it (a
#: button, a key, a rule's step: "Desistir", beside "Ir à guerra") and by its noun where it is
#: named as one of two things (the decision's name beside "guerra", an edge's column).
PORTUGUESE_SURRENDER = {
    "surrender": "desistência",
    "a Casino War decision is war or surrender": "guerra ou desistência",
    "Edge, surrender": "Vantagem, desistência",
    "Place your ante and deal. Higher card wins even money; on a tie you choose: war or "
    "surrender.": "guerra ou desistência",
    "Surrender · get %(amount)s back": "Desistir · ",
    "<strong>Surrender</strong>: half your ante comes back and the round ends.": (
        "<strong>Desistir</strong>"
    ),
    "Decide the tie first: <kbd>W</kbd> war or <kbd>S</kbd> surrender.": (
        "<kbd>W</kbd> ir à guerra ou <kbd>S</kbd> desistir"
    ),
    "Keys: <kbd>D</kbd> deal · <kbd>R</kbd> rebet · <kbd>W</kbd> war · <kbd>S</kbd> surrender · "
    "<kbd>1</kbd>–<kbd>%(last)s</kbd> add chips · <kbd>C</kbd> clear": (
        "<kbd>W</kbd> ir à guerra · <kbd>S</kbd> desistir"
    ),
}


def test_portuguese_says_surrender_as_a_verb_when_done_and_a_noun_when_named() -> None:
    catalogue = _catalogue("pt")
    said = {english: catalogue[english].string for english in PORTUGUESE_SURRENDER}
    assert [e for e, words in PORTUGUESE_SURRENDER.items() if words not in said[e]] == []


#: The Casino War keys are things the player does, as the buttons name them ("Go to war ·
#: raise"), so the war key is a verb like the others ("deal", "clear"), not the noun "war".
WAR_KEY = {
    "fi": "<kbd>W</kbd> mene sotaan",
    "nb": "<kbd>W</kbd> gå til krig",
    "pt": "<kbd>W</kbd> ir à guerra",
}


@pytest.mark.parametrize("language", sorted(WAR_KEY))
def test_the_casino_war_keys_name_going_to_war_as_the_button_does(language: str) -> None:
    keys = next(m for m in _catalogue(language) if str(m.id).startswith("Keys: <kbd>D</kbd>"))
    assert WAR_KEY[language] in keys.string
