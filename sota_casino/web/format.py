"""Template filters in the request's language: money in minor units (with the unit's plural
right), card names, times, and pretty JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC
from datetime import date
from datetime import datetime
from decimal import ROUND_HALF_EVEN
from decimal import Decimal
from fractions import Fraction
from typing import Any
from typing import Final

from babel import Locale
from babel.dates import format_date
from babel.dates import format_time
from babel.numbers import format_decimal
from flask import Flask

from ..core import fairness
from ..core.marks import N_
from .i18n import AMOUNT_WRITERS
from .i18n import NO_BREAK_SPACE
from .i18n import catalogue
from .i18n import datetime_pattern
from .i18n import gettext
from .i18n import gettext_counting
from .i18n import ngettext
from .i18n import plural_count
from .i18n import select_locale
from .winner_words import winners

SUIT_SYMBOLS: Final = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
SUIT_NAMES: Final = {"C": N_("clubs"), "D": N_("diamonds"), "H": N_("hearts"), "S": N_("spades")}
RANK_LABELS: Final = {"T": "10", "J": "J", "Q": "Q", "K": "K", "A": "A"}
#: Jacks, queens and kings: drawn with a figure instead of one big suit sign.
COURT_RANKS: Final = frozenset("JQK")
RANK_NAMES: Final = {
    "T": N_("ten"),
    "J": N_("jack"),
    "Q": N_("queen"),
    "K": N_("king"),
    "A": N_("ace"),
    "2": N_("two"),
    "3": N_("three"),
    "4": N_("four"),
    "5": N_("five"),
    "6": N_("six"),
    "7": N_("seven"),
    "8": N_("eight"),
    "9": N_("nine"),
}
#: A Sota game's outcome in words, as the console says it to staff and as the player's own pages
#: say it to the player, by side (:func:`sota_side`).
SOTA_OUTCOMES: Final = {
    "team_0": N_("player's side wins"),
    "team_1": N_("dealer's side wins"),
    "draw": N_("a draw"),
}
SOTA_OUTCOMES_TO_PLAYER: Final = {
    "team_0": N_("You win"),
    "team_1": N_("Dealer's side wins"),
    "draw": N_("A draw"),
}
#: The sign every shown negative number takes (Babel writes a hyphen-minus in these languages).
MINUS: Final = "−"


def _signed(amount: int | Decimal, signed: bool, digits: str) -> str:
    """Put the sign of ``amount`` before its ``digits`` (written without one)."""
    sign = MINUS if amount < 0 else ("+" if signed and amount > 0 else "")
    return sign + digits


def chips(amount: int | None, signed: bool = False) -> str:
    """Show hundredths of a chip as chips in the request's language: ``150`` → ``"1.50"``
    (``"1,50"`` in Finnish), ``1200`` → ``"12"``."""
    if amount is None:
        return "–"
    whole, cents = divmod(abs(amount), 100)
    locale = select_locale()
    if cents == 0:
        digits = format_decimal(whole, "#,##0", locale=locale)
    else:
        digits = format_decimal(Decimal(abs(amount)) / 100, "#,##0.00", locale=locale)
    return _signed(amount, signed, digits)


def sweets(amount: int | None, signed: bool = False) -> str:
    """Show a whole number of sweets in the request's language, with a sign when asked."""
    if amount is None:
        return "–"
    return _signed(amount, signed, format_decimal(abs(amount), "#,##0", locale=select_locale()))


def decimal(value: float | Fraction | Decimal, digits: int = 2) -> str:
    """Show a number with ``digits`` decimals in the request's language (``"1,234.50"``,
    ``"−7,12"``); a number that rounds to nought has no sign."""
    pattern = "#,##0." + "0" * digits if digits else "#,##0"
    if not isinstance(value, Decimal):
        ratio = Fraction(value)  # exact for floats and fractions alike
        value = Decimal(ratio.numerator) / ratio.denominator
    rounded = value.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_EVEN)
    return _signed(rounded, False, format_decimal(abs(rounded), pattern, locale=select_locale()))


def decimal_count(value: float | Fraction | Decimal, digits: int = 2) -> int:
    """Return the count that picks the plural form (for ``ngettext``) of ``value`` as
    :func:`decimal` writes it: "1.027 antes" is plural in English, singular in Portuguese."""
    if not isinstance(value, Decimal):
        ratio = Fraction(value)
        value = Decimal(ratio.numerator) / ratio.denominator
    rounded = abs(value.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_EVEN))
    return plural_count(rounded, int(rounded))


def interval(
    low: float | Fraction | Decimal, high: float | Fraction | Decimal, as_percent: bool = False
) -> str:
    """Show an interval's ends with two decimals in the request's language: ``"−7.12 … 33.12"``,
    or as percentages (``as_percent``, ends that are fractions): ``"−7.12 % … 33.12 %"``.

    An ellipsis stands between them in every language: a comma would blur into the decimal
    comma of Finnish, Norwegian and Portuguese (``"[-7,12, 33,12]"``), and a dash beside a minus
    sign reads as another minus (``"−7,12 – −3,00"``)."""
    show = percent if as_percent else decimal
    return f"{show(low)} … {show(high)}"


def whole_number(value: int | Fraction) -> str:
    """Show a number rounded to a whole one in the request's language (``"1 000"`` in Finnish):
    a chart's axis."""
    return decimal(round(Fraction(value)), 0)


def percent(fraction: float | Fraction | Decimal, digits: int = 2) -> str:
    """Show a fraction as a percentage in the request's language: ``0.02877`` → ``"2.88 %"``
    (``"2,88 %"`` in Finnish); the sign stands apart, as the casino's pages always wrote it,
    after a no-break space (Finnish and Norwegian write it so), never alone on a line."""
    return decimal(fraction * 100, digits) + NO_BREAK_SPACE + "%"


def fraction(value: str | Fraction) -> str:
    """Show an exact fraction (a :class:`~fractions.Fraction`, or the API's ``"a/b"``) in the
    request's language: ``"-26/43"`` → ``"−26/43"``, ``652901/19860460`` → ``"652,901/19,860,460"``
    (``"652 901/19 860 460"`` in Finnish), its sign and digits as the page's other numbers."""
    exact = Fraction(value)
    locale = select_locale()
    numerator = format_decimal(abs(exact.numerator), "#,##0", locale=locale)
    denominator = format_decimal(exact.denominator, "#,##0", locale=locale)
    return _signed(exact.numerator, False, f"{numerator}/{denominator}")


def plural(amount: int, unit: str) -> str:
    """Return an amount with its unit, in the plural form the language gives the amount.

    ``unit`` is ``"chip"`` (``amount`` in hundredths: ``100`` → ``"1 chip"``, ``150`` →
    ``"1.50 chips"``) or ``"sweet"`` (whole sweets: ``1`` → ``"1 sweet"``).
    """
    return chips_text(amount) if unit == "chip" else sweets_text(amount)


def chip_count(amount: int) -> int:
    """Return the count that picks the plural form of ``amount`` hundredths of a chip (for
    ``ngettext``): the whole chips, or for a fraction a count of the same form."""
    whole, cents = divmod(abs(amount), 100)
    return plural_count(abs(amount) / 100, whole) if cents else whole


def chips_text(amount: int | None, signed: bool = False) -> str:
    """Show hundredths of a chip with the word, never apart: ``"1 chip"``, ``"+12 chips"``."""
    if amount is None:
        return "–"
    text = chips(amount, signed)
    return ngettext("%(amount)s chip", "%(amount)s chips", chip_count(amount), amount=text)


def chips_back_text(amount: int) -> str:
    """Show hundredths of a chip got back, as "surrender and get ... " says it: ``"1 chip
    back"``. Its own message, as Finnish writes that object in another case ("saat 1 pelimerkin
    takaisin", not "1 pelimerkki")."""
    return ngettext(
        "%(amount)s chip back", "%(amount)s chips back", chip_count(amount), amount=chips(amount)
    )


def sweets_text(amount: int | None, signed: bool = False) -> str:
    """Show sweets with the word, never apart: ``"1 sweet"``, ``"−3 sweets"``."""
    if amount is None:
        return "–"
    text = sweets(amount, signed)
    return ngettext("%(amount)s sweet", "%(amount)s sweets", abs(amount), amount=text)


def when(stamp: str | datetime | None) -> str:
    """Show a moment as the request's language writes it, in UTC, saying so:
    ``"Dec 1, 2026, 8:31 AM UTC"``, ``"1.12.2026 klo 8.31 UTC"``.

    Takes the services' ISO 8601 text (``2026-12-01T08:31:13.842813Z``) or a datetime.
    """
    if stamp is None:
        return "–"
    moment = stamp if isinstance(stamp, datetime) else _parse_time(stamp)
    if moment is None:
        return str(stamp)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    locale = Locale.parse(select_locale())
    date = format_date(moment.astimezone(UTC), "medium", locale=locale)
    time = format_time(moment, "short", tzinfo=UTC, locale=locale)
    return datetime_pattern(select_locale()).replace("{1}", date).replace("{0}", time) + " UTC"


# A phrase left for the next page (i18n.phrase) may hold money or a moment: written as here.
AMOUNT_WRITERS.update(chips=chips_text, chips_number=chips, sweets=sweets_text, time=when)


def written_now(amounts: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Return amounts (of :func:`.i18n.phrase`'s kinds: ``{"chips": 150}``) written in this
    request's language: a refusal's params, which its ``amounts`` detail, the same amounts,
    has written again in the language its message is read in (a page may show it later)."""
    return {
        name: next(AMOUNT_WRITERS[kind](value) for kind, value in amount.items())
        for name, amount in amounts.items()
    }


def day(value: str | date) -> str:
    """Show a calendar day as the request's language writes it: ``"Dec 1, 2026"``,
    ``"1.12.2026"``, ``"1. des. 2026"``, ``"1 de dez. de 2026"``.

    Takes the services' ISO 8601 text (``2026-12-01``) or a date; other text is shown as it is.
    """
    try:
        day = date.fromisoformat(value) if isinstance(value, str) else value
    except ValueError:
        return str(value)
    return format_date(day, "medium", locale=Locale.parse(select_locale()))


def _parse_time(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def sota_side(outcome: object) -> str | None:
    """Return the side a Sota game's outcome names: the winning seat ``0`` (the player's) or
    team ``"team_0"`` → ``"team_0"``, another seat (the dealer, a computer player) or
    ``"team_1"`` → ``"team_1"``, ``"draw"`` → ``"draw"``; None for what is no Sota outcome."""
    if type(outcome) is int:
        return "team_0" if outcome == 0 else "team_1"
    return outcome if isinstance(outcome, str) and outcome in SOTA_OUTCOMES else None


def sota_outcome(outcome: object, *, to_player: bool = False) -> str | None:
    """Return a Sota game's outcome in words in the request's language, to staff ("player's
    side wins") or to the player (``to_player``: "You win"); None for what is no outcome."""
    side = sota_side(outcome)
    if side is None:
        return None
    return gettext((SOTA_OUTCOMES_TO_PLAYER if to_player else SOTA_OUTCOMES)[side])


def sota_winner(winner: object) -> str:
    """Return who won a Sota game as its page's result says it, in the request's language: a
    whole sentence for the winning seat or side ("Dealer wins", :mod:`.winner_words`)."""
    said = winners(catalogue(select_locale()))
    return said.get(str(winner), str(winner))


#: The codes the console's lists hold, in words: money moves' kinds, games, rounds' states and
#: Casino War outcomes, seed pairs' states, proposals' states (a Sota game's outcome is
#: :data:`SOTA_OUTCOMES`'). A code not listed is shown as it is.
TERMS: Final = {
    "bet": N_("bet"),
    "raise": N_("raise"),
    "settle": N_("settlement"),
    "grant": N_("grant"),
    "topup": N_("top-up"),
    "adjust": N_("adjustment"),
    "casino_war": N_("Casino War"),
    "sota": N_("Sota"),
    "awaiting_decision": N_("awaiting a decision"),
    "awaiting_move": N_("awaiting a move"),
    "settled": N_("settled"),
    "open": N_("in play"),
    "win": N_("player wins"),
    "lose": N_("dealer wins"),
    "surrender": N_("player surrendered"),
    "war_win": N_("player won the war"),
    "war_tie": N_("war tied: player wins"),
    "war_lose": N_("dealer won the war"),
    "next": N_("next"),
    "active": N_("active"),
    "revealed": N_("revealed"),
    "pending": N_("pending"),
    "approved": N_("approved"),
    "rejected": N_("rejected"),
}


def term(code: object) -> str:
    """Return a code of the console's lists in words, in the request's language (a Sota game's
    outcome by the side it names, :func:`.format.sota_outcome`)."""
    outcome = sota_outcome(code)
    if outcome is not None:
        return outcome
    words = TERMS.get(code) if isinstance(code, str) else None
    return gettext(words) if words else str(code)


def card_name(code: str) -> str:
    """Return the spoken name of a card, for screen readers: ``"TD"`` → ``"ten of diamonds"``."""
    if code.startswith("X"):
        return gettext("joker")
    rank, suit = RANK_NAMES.get(code[0]), SUIT_NAMES.get(code[1])
    if rank is None or suit is None:
        return code
    # The card's name as a whole: Finnish says "ruutukymppi", not "ten of diamonds" word by word.
    return gettext("%(rank)s of %(suit)s", rank=gettext(rank), suit=gettext(suit))


def card_parts(code: str) -> dict[str, Any]:
    """Return what the card macro draws: rank label, suit symbol, colour, and spoken name."""
    if code.startswith("X"):
        return {
            "rank": "★",
            "suit": "JOKER",
            "red": code == "X1",
            "name": gettext("joker"),
            "joker": True,
        }
    return {
        "rank": RANK_LABELS.get(code[0], code[0]),
        "suit": SUIT_SYMBOLS.get(code[1], "?"),
        "red": code[1] in "DH",
        "name": card_name(code),
        "joker": False,
        "court": code[0] in COURT_RANKS,
    }


def pretty_json(value: Any) -> str:
    """Return ``value`` as indented JSON with sorted keys, for reading."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def age(seconds: float | None) -> str:
    """Return how long ago, briefly: "12 s", "4 min", "3 h", "2 days"."""
    if seconds is None:
        return "—"
    whole = max(0, int(seconds))
    if whole >= 86_400:
        return ngettext("%(num)s day", "%(num)s days", whole // 86_400)
    if whole >= 3_600:
        return _with_unit(N_("%(num)s h"), whole // 3_600)
    if whole >= 60:
        return _with_unit(N_("%(num)s min"), whole // 60)
    return _with_unit(N_("%(num)s s"), whole)


def _with_unit(message: str, num: int) -> str:
    """A count with its unit's abbreviation ("4 min"), kept on one line as plurals are."""
    return gettext_counting(message, ("num",), num=num)


def init_app(app: Flask) -> None:
    """Register the filters on ``app`` (and ``chip_count``, for plurals written in templates)."""
    app.jinja_env.globals.update(chip_count=chip_count, decimal_count=decimal_count)
    app.jinja_env.filters.update(
        chips=chips,
        percent=percent,
        fraction=fraction,
        decimal=decimal,
        interval=interval,
        sweets=sweets,
        card_parts=card_parts,
        pretty_json=pretty_json,
        age=age,
        chips_text=chips_text,
        chips_back_text=chips_back_text,
        sweets_text=sweets_text,
        when=when,
        day=day,
        sota_outcome=sota_outcome,
        sota_winner=sota_winner,
        stamp=fairness.format_time,  # a moment as the API writes it (a <time> element's datetime)
    )
