"""The players' languages: which one a request speaks, its catalogue, and the language picker.

Pages speak the player's stored choice, else the picker's cookie (visitors), else the best
match of ``Accept-Language``, else English. A language a visitor picks is stored with the
account at login (the choice just made wins). The JSON API keeps English unless the client sends
``Accept-Language`` (its codes never change). Catalogues are gettext ``.mo`` files compiled
from ``sota_casino/translations/<lang>/LC_MESSAGES/messages.po`` (``make translations``);
English is the source language and needs none.

Text that core and services raise is marked with the no-op ``N_`` and translated here by its
message id (:func:`error_message`). A message left for the next page (a flash) is left the same
way, by its id and params (:func:`phrase`), and worded as that page is drawn: in its language.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from decimal import Decimal
from typing import Any
from typing import Final
from typing import cast

from babel import Locale
from babel.messages.extract import DEFAULT_KEYWORDS
from babel.messages.extract import extract_from_file
from babel.numbers import format_decimal
from babel.support import NullTranslations
from babel.support import Translations
from flask import Blueprint
from flask import Flask
from flask import abort
from flask import current_app
from flask import flash
from flask import g
from flask import has_request_context
from flask import redirect
from flask import request
from flask import session
from flask import url_for
from flask.typing import ResponseReturnValue
from jinja2 import pass_context
from jinja2.runtime import Context
from markupsafe import Markup

from ..core.errors import CasinoError
from ..core.errors import InvalidInput
from ..core.errors import InvalidRules
from ..core.errors import Unavailable
from ..core.marks import N_
from ..db import get_session
from ..locations import STATIC
from ..locations import TRANSLATIONS
from ..services import accounts
from .assets import KEPT
from .assets import VERSION_ARG
from .form_words import CHOOSE_OFFERED
from .form_words import NOT_AN_OPTION
from .form_words import in_the_forms_words
from .paths import is_local_path
from .paths import wants_json
from .visitor import cookie_name
from .visitor import cookies_are_secure
from .visitor import session_user
from .winner_words import winners

#: The languages the casino speaks, each named in itself (the picker shows these names).
LANGUAGES: Final = {"en": "English", "fi": "suomi", "nb": "norsk bokmål", "pt": "português"}
DEFAULT: Final = "en"
#: The picker's cookie, for visitors (a player's choice is stored with the account).
COOKIE: Final = "lang"
#: The session's record of a language a visitor picked: logging in stores it with the account.
PICKED: Final = "picked_locale"
COOKIE_AGE: Final = 365 * 24 * 3600
#: The gettext domain of every catalogue.
DOMAIN: Final = "messages"
#: Between a number and its unit or sign: a line never breaks there ("12 chips", "2.88 %").
NO_BREAK_SPACE: Final = "\u00a0"
#: A placeholder of a message that counts, and the space after it: the count and its word
#: ("%(num)s pelimerkkiä", "Lay <strong>%(count)s</strong> cards"). static/js/i18n.js's twin.
COUNT_AND_WORD: Final = r"(%\((?:{names})\)s(?:</\w+>)?) "
#: A range written tight ("10–128", "%(low)s–%(high)s", "A–Z"): its en dash, with something
#: other than a space on each side.
TIGHT_DASH: Final = re.compile(r"(?<=\S)–(?=[^\s\u2060])")
#: After a range's dash, so that no line ends between it and the range's end: a line may end
#: after an en dash ("10–" and "128" on the next line, on a 320 px phone), never before one.
WORD_JOINER: Final = "\u2060"
#: Where the scripts live whose shown strings go to the page as JSON.
SCRIPTS: Final = STATIC / "js"

bp = Blueprint("language", __name__)


# --- which language ---------------------------------------------------------------------------


def accepted_language() -> str | None:
    """Return the best of our languages in ``Accept-Language``, or None if it names none.

    Werkzeug matches "pt-BR" to "pt" by the primary tag; "no" and "nn" readers get Bokmål.
    """
    if "Accept-Language" not in request.headers:
        return None
    best = request.accept_languages.best_match([*LANGUAGES, "no", "nn"])
    return "nb" if best in ("no", "nn") else best


def select_locale() -> str:
    """Return this request's language (cached for the request); English outside a request."""
    if not has_request_context():
        return DEFAULT
    if "locale" not in g:
        g.locale = _choose()
    locale: str = g.locale
    return locale


def _choose() -> str:
    if wants_json():
        return accepted_language() or DEFAULT
    try:
        user = session_user()
    except Unavailable:
        user = None  # the outage's own page still needs a language: the cookie's or the browser's
    if user is not None and user.locale in LANGUAGES:
        return user.locale
    cookie = request.cookies.get(cookie_name(COOKIE))
    if cookie in LANGUAGES:
        return cookie
    return accepted_language() or DEFAULT


# --- translating --------------------------------------------------------------------------------


def ranges_kept(text: str) -> str:
    """Return ``text`` with each range it writes tight kept on one line: a word joiner after
    the dash ("10–\u2060128")."""
    return TIGHT_DASH.sub("–" + WORD_JOINER, text)


class RangesKept(NullTranslations):
    """A catalogue whose every text keeps its ranges on one line (:func:`ranges_kept`).

    Done here, as a message is looked up, not in each catalogue: the translators write ranges
    where the English has none ("%(min)s to %(max)s" is "%(min)s–%(max)s" in Finnish), and the
    joiner cannot be seen in a catalogue to be remembered."""

    def __init__(self, books: NullTranslations) -> None:
        super().__init__()
        self.books = books
        # The catalogue's Plural-Forms, which the scripts' forms are chosen by (English has none).
        rule = getattr(books, "plural", None)
        if callable(rule):
            self.plural = rule

    def gettext(self, message: str) -> str:
        return ranges_kept(self.books.gettext(message))

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return ranges_kept(self.books.ngettext(singular, plural, n))


@functools.cache
def catalogue(locale: str) -> NullTranslations:
    """Return the compiled catalogue of ``locale`` (English: none, the ids are the text), its
    ranges kept on one line (:class:`RangesKept`)."""
    if locale == DEFAULT:
        return RangesKept(NullTranslations())
    return RangesKept(Translations.load(str(TRANSLATIONS), [locale], DOMAIN))


def gettext(message: str, **params: object) -> str:
    """Translate ``message`` into this request's language, filling in ``%(name)s`` params."""
    # The empty id is the catalogue's header, never a message.
    text = catalogue(select_locale()).gettext(message) if message else message
    return text % params if params else text


def ngettext(singular: str, plural: str, n: int, **params: object) -> str:
    """Translate a message whose form depends on the count ``n`` (``%(num)s`` is ``n``, written
    as :func:`count_text` writes it), its counts kept beside their words (:func:`counted`)."""
    text = counted(catalogue(select_locale()).ngettext(singular, plural, n))
    return text % {"num": count_text(n), **params}


def count_text(n: int) -> str:
    """Write a count as the request's language writes numbers: ``12,345`` in English,
    ``12 345`` in Finnish, ``12.345`` in Portuguese."""
    return format_decimal(n, "#,##0", locale=select_locale())


def counted(message: str, *counts: str) -> str:
    """Return a translated message that counts with a no-break space after each placeholder
    (only those named in ``counts``, if any), so that no line ends between a number and its
    word or unit ("12 chips", "12 pelimerkkiä", "24 h").

    Done here, as the message is filled in, not in each catalogue: every language's plural
    message puts the count and its word apart with a plain space, and a translator would
    have to remember the rule in each new one."""
    names = "|".join(map(re.escape, counts)) or r"\w+"
    return re.sub(COUNT_AND_WORD.format(names=names), r"\1" + NO_BREAK_SPACE, message)


def gettext_counting(message: str, counts: tuple[str, ...], **params: object) -> str:
    """Translate a message that counts without plural forms (a number and a unit's
    abbreviation: "within %(hours)s h"), its params named in ``counts`` kept beside their
    words as :func:`ngettext` keeps its count."""
    return counted(catalogue(select_locale()).gettext(message), *counts) % params


def plural_count(value: float | Decimal, whole: int) -> int:
    """Return an integer that takes the same plural form as ``value`` in this language.

    gettext chooses forms by an integer; "1.50 chips" is plural in English but singular in
    Portuguese (CLDR counts the integer digits there), so a fraction is matched to a whole
    number of the same CLDR category.
    """
    locale = Locale.parse(select_locale())
    category = locale.plural_form(value)
    candidates = (whole, 2, 5, 0, 1, 1_000_000)
    return next((n for n in candidates if locale.plural_form(n) == category), whole)


def error_message(error: CasinoError) -> str:
    """Return a refusal's message in this request's language (by its message id); on a page,
    as its form words it (:mod:`.form_words`: labels, not field ids or option codes)."""
    return phrase_text(refusal_phrase(error))


def refusal_phrase(error: CasinoError) -> Phrase:
    """Return a refusal as a :func:`phrase`, worded as :func:`error_message` words it: a page
    may show it later, in the language it is read in then.

    Params a view wrote in the request's language (money, a moment) are taken as the amounts
    its ``amounts`` detail gives for them, written as the phrase is worded; a refusal whose
    ``sentence`` detail is set starts with a capital (:func:`in_words`).
    """
    amounts = error.details.get(AMOUNTS)
    params = {**error.params, **amounts} if isinstance(amounts, Mapping) else error.params
    capital = bool(error.details.get(SENTENCE))
    if has_request_context() and not wants_json():
        worded = in_the_forms_words(error, request.endpoint or "")
        if worded is not None:
            message, label = worded
            words = (*error.words, "label") if label else tuple(error.words - {"label"})
            return phrase(message, {**params, "label": label}, words=words, sentence=capital)
    if error.plural:
        count = error.params.get("num")
        assert isinstance(count, int), "a plural refusal counts with an integer num"
    said: str | tuple[str, str] = (error.template, error.plural) if error.plural else error.template
    return phrase(said, params, words=error.words, sentence=capital)


def _label_capitalized(text: str, label: object) -> str:
    """Return a refusal that starts with its field's label with a capital first letter.

    A language may start the sentence with the label ("panos: arvon on oltava ..."), which a
    form writes in lower case to stand inside a sentence ("The ante must be ...").
    """
    if isinstance(label, str) and label and text.startswith(label):
        return text[:1].upper() + text[1:]
    return text


def sentence(text: str) -> str:
    """Return ``text`` with its first letter a capital (after any opening quote mark)."""
    first = next((at for at, char in enumerate(text) if char.isalpha()), None)
    if first is None:
        return text
    return text[:first] + text[first].upper() + text[first + 1 :]


def sentence_text(text: str) -> str:
    """Return ``text`` (a template's translated words) as plain text, a sentence: for an
    attribute, which the template escapes once, as any text it writes."""
    plain = text.unescape() if isinstance(text, Markup) else text
    return sentence(plain)


#: The params of a rule refusal that name an option by its code (``min_bet``, ``teams``).
OPTION_PARAMS: Final = ("option", "other")


def in_words(error: InvalidRules, titles: Mapping[str, str]) -> InvalidRules:
    """Return a rule option's refusal as a form words it, a sentence, whole in the language it
    is read in.

    The engines name options by their codes; ``titles`` gives each code's name on the form
    (marked with ``N_``), which takes the code's place as a param that is a message id, so the
    sentence around it is translated with it, not only the name, when the refusal is worded
    (:func:`refusal_phrase`: a page may show it later, in another language). A refusal that
    names no option of ``titles`` is returned as it is.
    """
    named = {
        key: titles[value]
        for key, value in error.params.items()
        if key in OPTION_PARAMS and isinstance(value, str) and value in titles
    }
    if not named:
        return error
    # A value none of the form's options: the form shows their words, the engine their codes.
    template = CHOOSE_OFFERED if error.template in NOT_AN_OPTION else error.template
    params = {**error.params, **named, "label": named.get("option", "")}
    # A form's name may be in lower case to stand inside a sentence ("minimum stake"): the
    # sentence starts with a capital whatever comes first in the language it is read in.
    details = {**error.details, SENTENCE: True}
    return InvalidRules(template, params=params, words={*error.words, *named, "label"}, **details)


# --- messages left for the next page --------------------------------------------------------------

#: The key of a phrase's message id (:func:`phrase`).
FLASHED_ID: Final = "message_id"
#: A message by its id and params, worded when it is shown (:func:`phrase`): JSON.
Phrase = dict[str, object]


def names_text(ids: Iterable[str]) -> str:
    """Write a list of names given by their message ids (a table's rule sets), each in this
    request's language, as the pages list them: ``Nordic, English``."""
    return ", ".join(gettext(name) for name in ids)


#: How a phrase's amounts are written, by their kind (:func:`phrase`): a count and a list of
#: names here; money and moments as the pages write them, added by :mod:`.format` (which words
#: them with this module).
AMOUNT_WRITERS: Final[dict[str, Callable[[Any], str]]] = {"count": count_text, "names": names_text}
#: The key of a refusal's details that gives params as amounts (:func:`refusal_phrase`).
AMOUNTS: Final = "amounts"
#: The key of a refusal's details that says it is worded as a sentence (:func:`in_words`).
SENTENCE: Final = "sentence"


def phrase(
    message: str | tuple[str, str],
    params: Mapping[str, object] | None = None,
    *,
    words: Iterable[str] = (),
    counts: Iterable[str] = (),
    sentence: bool = False,
) -> Phrase:
    """Return ``message`` (an id) with its ``%(name)s`` params, to be worded later, in the
    language it is read in (:func:`phrase_text`); kept small and JSON, as the session's cookie
    holds a message left for the next page.

    :param message: a message id; or its singular and plural (``Nn_``), counted by ``num``.
    :param words: the params that are message ids themselves (a label, a role's name).
    :param counts: the params kept beside the word after them, as :func:`gettext_counting`
        keeps them ("24 h").
    :param sentence: start it with a capital (:func:`sentence`), whatever comes first in the
        language it is read in (a name in lower case).

    A param is text or a number, shown as it is; a phrase, worded as the message is; or an
    amount the language writes, ``{"count": n}`` (a count), ``{"chips": n}`` (hundredths of a
    chip, with the word), ``{"chips_number": n}`` (without it), ``{"sweets": n}``,
    ``{"time": iso}`` (a moment, as :func:`.format.when` writes it) or ``{"names": [id, ...]}``
    (names by their message ids, listed as :func:`names_text` lists them).
    """
    singular, plural = message if isinstance(message, tuple) else (message, "")
    stored: Phrase = {FLASHED_ID: singular}
    if plural:
        stored["plural"] = plural
    params = params or {}
    if params:
        stored["params"] = {name: _storable(value) for name, value in params.items()}
    named = sorted(set(words) & params.keys())
    if named:
        stored["words"] = named
    kept = sorted(set(counts) & params.keys())
    if kept:
        stored["counts"] = kept
    if sentence:
        stored["sentence"] = True
    return stored


def _storable(value: object) -> object:
    if value is None or isinstance(value, str | int | float | Mapping):
        return value
    return str(value)  # as %s writes it (a Decimal, a list of names)


def phrase_text(stored: Mapping[str, object]) -> str:
    """Return a :func:`phrase` in this request's language: its params that are ids, phrases
    and amounts worded first."""
    text = _phrase_words(stored)
    return sentence(text) if stored.get("sentence") is True else text


def _phrase_words(stored: Mapping[str, object]) -> str:
    message = stored.get(FLASHED_ID)
    if not isinstance(message, str):
        return ""
    given = stored.get("params")
    params = dict(given) if isinstance(given, Mapping) else {}
    words = stored.get("words")
    ids = set(words) if isinstance(words, list) else set()
    filled = {name: _param_text(value, name in ids) for name, value in params.items()}
    label = filled.get("label")
    plural = stored.get("plural")
    if isinstance(plural, str) and plural:
        count = _count(params.get("num"))
        # Only the count keeps to its word: another number in it ("move 2 must lay ...") is not
        # the count of the word after it.
        text = counted(catalogue(select_locale()).ngettext(message, plural, count), "num")
        return text % {**filled, "num": filled.get("num", count)}
    counts = stored.get("counts")
    if isinstance(counts, list) and counts:
        return gettext_counting(message, tuple(map(str, counts)), **filled)
    return _label_capitalized(gettext(message, **filled), label)


def _param_text(value: object, is_id: bool) -> object:
    if is_id and isinstance(value, str):
        return gettext(value) if value else value
    if isinstance(value, Mapping):
        if FLASHED_ID in value:
            return phrase_text(value)
        for kind, write in AMOUNT_WRITERS.items():
            if kind in value:
                return write(value[kind])
    return value


def _count(value: object) -> int:
    if isinstance(value, Mapping):
        value = value.get("count")
    assert isinstance(value, int), "a plural phrase counts with an integer num"
    return value


def flash_words(message: str, category: str, **params: object) -> None:
    """Leave ``message`` (an id, its ``%(name)s`` params given) for the next page to show,
    translated as that page is drawn: in the language it is read in, which the player may have
    changed since (a flash of text keeps the language of the request that left it)."""
    flash_phrase(phrase(message, params), category)


def flash_phrase(stored: Phrase, category: str) -> None:
    """Leave a :func:`phrase` for the next page to show, worded in that page's language."""
    # Flask types the message as text but keeps whatever the session's cookie can hold.
    flash(cast(str, stored), category)


def flashed_text(message: object) -> str:
    """A message left for this page, in its language: one left by its id is translated now;
    one left as text (already in words) stays."""
    if isinstance(message, Mapping) and isinstance(message.get(FLASHED_ID), str):
        return phrase_text(message)
    return str(message)


# --- the scripts' strings -------------------------------------------------------------------------


#: What marks a message in the scripts: gettext's own, and ``N_``/``Nn_`` (i18n.js) as for
#: ``pybabel extract`` (``make translations-extract``).
SCRIPT_KEYWORDS: Final = {**DEFAULT_KEYWORDS, "Nn_": (1, 2)}


@functools.cache
def script_messages() -> tuple[str | tuple[str, str], ...]:
    """Return the message ids the scripts show (found once, as ``pybabel extract`` finds them)."""
    found: dict[str | tuple[str, str], None] = {}
    for path in sorted(SCRIPTS.glob("*.js")):
        for _line, message, _comments, _context in extract_from_file(
            "javascript", str(path), keywords=SCRIPT_KEYWORDS
        ):
            if isinstance(message, str):
                found[message] = None
            elif len(message) >= 2 and message[0] and message[1]:
                found[(message[0], message[1])] = None
    return tuple(found)


def script_translations_url() -> str:
    """Return the URL of this page's language's strings for its scripts, naming their version
    (:func:`scripts_words`): every page asks for it, and a browser keeps it for a year."""
    locale = select_locale()
    _, version = _script_words(locale, catalogue(locale))
    values: dict[str, Any] = {"locale": locale, VERSION_ARG: version}
    return url_for("language.scripts_words", **values)


@bp.get("/language/<locale>.js")
def scripts_words(locale: str) -> ResponseReturnValue:
    """Serve a language's strings for the scripts, as ``window.SotaTranslations`` (a script: the
    CSP allows no inline one). ``static/js/i18n.js`` reads it.

    Each page carried them in a block of its own: 64 KB of the landing page's 68 KB, sent again
    with every page. Under a URL naming their version they come once, kept as the static files
    are (:mod:`.assets`); a URL naming another version (a page drawn before a release) is
    answered with the current strings, to ask for again each time.
    """
    if locale not in LANGUAGES:
        abort(404)
    text, version = _script_words(locale, catalogue(locale))
    response = current_app.response_class(text, mimetype="text/javascript")
    response.headers["Cache-Control"] = (
        KEPT if request.args.get(VERSION_ARG) == version else "no-cache"
    )
    response.set_etag(version)
    return response.make_conditional(request)


@functools.lru_cache(maxsize=16)
def _script_words(locale: str, books: NullTranslations) -> tuple[str, str]:
    """Return the script of :func:`scripts_words` for ``books`` and its version (made once).

    A message with a plural comes as its list of forms, in gettext's order; ``plural`` gives
    the form of each count below 100 and ``plural_other`` the form of larger ones.
    ``sota_winners`` is each Sota winner's sentence (:func:`.winner_words.winners`).
    """
    form_of = _plural_function(books)
    examples: dict[int, int] = {}
    for n in (*range(100), 1_000_000):
        examples.setdefault(form_of(n), n)
    messages: dict[str, str | list[str]] = {}
    for message in script_messages():
        if isinstance(message, str):
            messages[message] = books.gettext(message)
        else:
            singular, plural = message
            messages[singular] = [
                books.ngettext(singular, plural, examples[form]) for form in sorted(examples)
            ]
    payload = {
        "locale": locale,
        "messages": messages,
        "plural": [form_of(n) for n in range(100)],
        "plural_other": form_of(101),
        "datetime": datetime_pattern(locale),
        "sota_winners": winners(books),
    }
    text = f"window.SotaTranslations = {json.dumps(payload, ensure_ascii=False, sort_keys=True)};\n"
    return text, hashlib.sha256(text.encode()).hexdigest()[:12]


def datetime_pattern(locale: str) -> str:
    """Return how ``locale`` joins a date ``{1}`` and a time ``{0}`` into one moment
    (``"{1}, {0}"`` in English): the pages' times and the scripts' are written alike."""
    return str(Locale.parse(locale).datetime_formats["medium"])


def _plural_function(books: NullTranslations) -> Callable[[int], int]:
    """Return gettext's form index of a count (the catalogue's Plural-Forms; English's rule)."""
    rule = getattr(books, "plural", None)
    if callable(rule):
        return lambda n: int(rule(n))
    return lambda n: 0 if n == 1 else 1


# --- the picker -----------------------------------------------------------------------------------


def shown_at(address: str) -> None:
    """Say that this answer to a form shows the page at ``address`` (a refused bet shown on its
    table): the picker brings the player back there."""
    g.page_address = address


def page_address() -> str:
    """Return the address of the page this answer shows, where the picker brings the player back.

    A page loaded by GET is at its own address; an answer to a form is at the one its view gave
    with :func:`shown_at`, else at the form's own if that address shows a page too (a refused
    login), else at none (the picker then goes home).
    """
    if request.method == "GET":
        return request.full_path.rstrip("?")
    given: str | None = g.get("page_address")
    if given is not None:
        return given
    urls = current_app.create_url_adapter(request)
    if urls is not None and urls.test(request.path, "GET"):
        return request.path
    return ""


@bp.post("/language")
def choose() -> ResponseReturnValue:
    """Switch the language: stored with the account of a logged-in player (a visitor's, in the
    session, goes to the account at login), in a cookie for everyone; then back to the page the
    picker was on."""
    chosen = request.form.get("locale", "")
    if chosen not in LANGUAGES:
        raise InvalidInput(N_("choose one of the languages offered"), field="locale")
    user = session_user()
    if user is not None:
        accounts.set_locale(get_session(), user.id, chosen)
    else:
        # The choice just made on the page is the player's latest: logging in keeps it.
        session[PICKED] = chosen
    # Back to the page the picker was on; a page answering a form has no address to go back to.
    back = request.form.get("next", "")
    response = redirect(back if is_local_path(back) else "/", 303)
    # Secure and host-bound where the session's cookie is (HTTPS, or SESSION_COOKIE_SECURE).
    response.set_cookie(
        cookie_name(COOKIE),
        chosen,
        max_age=COOKIE_AGE,
        samesite="Lax",
        httponly=True,
        secure=cookies_are_secure(),
    )
    return response


def init_app(app: Flask) -> None:
    """Give templates ``{% trans %}``, ``_()`` and ``ngettext()``, and the language helpers."""
    app.jinja_env.add_extension("jinja2.ext.i18n")
    app.jinja_env.policies["ext.i18n.trimmed"] = True
    # Newstyle: Jinja fills in the %(name)s params itself (and escapes them), so it is given
    # the bare catalogue lookups.
    app.jinja_env.install_gettext_callables(  # type: ignore[attr-defined]  # added by the extension
        lambda message: catalogue(select_locale()).gettext(message),
        lambda singular, plural, n: counted(
            catalogue(select_locale()).ngettext(singular, plural, n)
        ),
        newstyle=True,
    )
    filled_in = cast(Callable[..., str], app.jinja_env.globals["ngettext"])

    @pass_context
    def ngettext_counting(
        context: Context, singular: str, plural: str, n: int, **params: object
    ) -> str:
        # Jinja's newstyle ngettext fills in %(num)s with the bare count: give it the written one.
        params.setdefault("num", count_text(n))
        return filled_in(context, singular, plural, n, **params)

    app.jinja_env.globals["ngettext"] = ngettext_counting
    app.jinja_env.filters["sentence"] = sentence_text
    app.jinja_env.filters["flashed"] = flashed_text
    app.jinja_env.globals.update(
        current_locale=select_locale,
        languages=LANGUAGES,
        page_address=page_address,
        script_translations_url=script_translations_url,
    )
    app.register_blueprint(bp)
