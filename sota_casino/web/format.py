"""Template filters: money in minor units (with the unit's plural right), card codes, times, and
pretty JSON."""

from __future__ import annotations

import json
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import Final

from flask import Flask

SUIT_SYMBOLS: Final = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
SUIT_NAMES: Final = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
RANK_LABELS: Final = {"T": "10", "J": "J", "Q": "Q", "K": "K", "A": "A"}
#: Jacks, queens and kings: drawn with a figure instead of one big suit sign.
COURT_RANKS: Final = frozenset("JQK")
RANK_NAMES: Final = {
    "T": "ten",
    "J": "jack",
    "Q": "queen",
    "K": "king",
    "A": "ace",
    "2": "two",
    "3": "three",
    "4": "four",
    "5": "five",
    "6": "six",
    "7": "seven",
    "8": "eight",
    "9": "nine",
}


def chips(amount: int | None, signed: bool = False) -> str:
    """Show hundredths of a chip as chips: ``150`` → ``"1.50"``, ``1200`` → ``"12"``."""
    if amount is None:
        return "–"
    sign = "−" if amount < 0 else ("+" if signed and amount > 0 else "")
    whole, cents = divmod(abs(amount), 100)
    text = f"{whole:,}" if cents == 0 else f"{whole:,}.{cents:02d}"
    return sign + text


def sweets(amount: int | None, signed: bool = False) -> str:
    """Show a whole number of sweets, with a sign when asked."""
    if amount is None:
        return "–"
    sign = "−" if amount < 0 else ("+" if signed and amount > 0 else "")
    return f"{sign}{abs(amount):,}"


def plural(amount: int, unit: str) -> str:
    """Return an amount with its unit, singular only for exactly one.

    ``unit`` is ``"chip"`` (``amount`` in hundredths: ``100`` → ``"1 chip"``, ``150`` →
    ``"1.50 chips"``) or ``"sweet"`` (whole sweets: ``1`` → ``"1 sweet"``).
    """
    if unit == "chip":
        return f"{chips(amount)} {'chip' if abs(amount) == 100 else 'chips'}"
    return f"{sweets(amount)} {unit if abs(amount) == 1 else unit + 's'}"


def chips_text(amount: int | None, signed: bool = False) -> str:
    """Show hundredths of a chip with the word: ``"1 chip"``, ``"+12 chips"``."""
    if amount is None:
        return "–"
    return f"{chips(amount, signed)} {'chip' if abs(amount) == 100 else 'chips'}"


def sweets_text(amount: int | None, signed: bool = False) -> str:
    """Show sweets with the word: ``"1 sweet"``, ``"−3 sweets"``."""
    if amount is None:
        return "–"
    return f"{sweets(amount, signed)} {'sweet' if abs(amount) == 1 else 'sweets'}"


def when(stamp: str | datetime | None) -> str:
    """Show a moment the one way every page does: ``"2026-12-01 08:31 UTC"``.

    Takes the services' ISO 8601 text (``2026-12-01T08:31:13.842813Z``) or a datetime.
    """
    if stamp is None:
        return "–"
    moment = stamp if isinstance(stamp, datetime) else _parse_time(stamp)
    if moment is None:
        return str(stamp)
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _parse_time(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def card_label(code: str) -> str:
    """Return the short label of a card: ``"TD"`` → ``"10♦"``, ``"X1"`` → ``"Joker"``."""
    if code.startswith("X"):
        return "Joker"
    return RANK_LABELS.get(code[0], code[0]) + SUIT_SYMBOLS.get(code[1], "?")


def card_name(code: str) -> str:
    """Return the spoken name of a card, for screen readers: ``"TD"`` → ``"ten of diamonds"``."""
    if code.startswith("X"):
        return "joker"
    return f"{RANK_NAMES.get(code[0], code[0])} of {SUIT_NAMES.get(code[1], code[1])}"


def card_parts(code: str) -> dict[str, Any]:
    """Return what the card macro draws: rank label, suit symbol, colour, and spoken name."""
    if code.startswith("X"):
        return {"rank": "★", "suit": "JOKER", "red": code == "X1", "name": "joker", "joker": True}
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
    for unit, size in (("days", 86_400), ("h", 3_600), ("min", 60)):
        if whole >= size:
            return f"{whole // size} {unit}"
    return f"{whole} s"


def init_app(app: Flask) -> None:
    """Register the filters on ``app``."""
    app.jinja_env.filters.update(
        chips=chips,
        sweets=sweets,
        card_label=card_label,
        card_name=card_name,
        card_parts=card_parts,
        pretty_json=pretty_json,
        age=age,
        chips_text=chips_text,
        sweets_text=sweets_text,
        when=when,
    )
